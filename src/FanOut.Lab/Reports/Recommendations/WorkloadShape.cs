namespace FanOut.Lab.Reports.Recommendations;

/// <summary>A row of seed 000's decision matrix: a kind of work, the scenario that measures it, and what the seeds advised.</summary>
/// <param name="Name">The shape, e.g. "a downstream with a capacity".</param>
/// <param name="ScenarioId">The scenario whose cases measure it.</param>
/// <param name="SeedAdvice">What the seeds advised, in a sentence, naming the seed.</param>
/// <param name="AdvisedPrefix">The start of the advised strategy's name (e.g. <c>Parallel.ForEach (</c>), or null when the seeds are silent.</param>
/// <param name="NoKnownLimit">
/// True for I/O whose downstream limit nobody knows: the advice is FanOut's default (the adaptive limit), never "all at
/// once", whatever an unbounded row measured against a simulated wait that nothing limits (analyzer FO0003 flags it).
/// </param>
public sealed record WorkloadShape(string Name, string ScenarioId, string SeedAdvice, string? AdvisedPrefix, bool NoKnownLimit = false)
{
    /// <summary>The shapes the lab measures, in the order the recommendations list them.</summary>
    public static IReadOnlyList<WorkloadShape> All { get; } =
    [
        new("Waits (async I/O, no known downstream limit)", "seed000-fanout500", "seed 001: Task.WhenAll for I/O", "Task.WhenAll", NoKnownLimit: true),
        new("CPU-bound", "seed001-cpu", "seed 001: Parallel.ForEachAsync for CPU-bound work", "Parallel.ForEachAsync"),
        new("Mixed CPU and waits", "seed004-mixed", "seed 004: a Task.Run projection (or ForEachAsync), ~5x faster than a plain projection", "Task.Run"),
        new("A downstream with a capacity", "downstream-capacity", "seed 000: pick the concurrency you can afford, then an API that enforces it (ForEachAsync with a DOP)", "Parallel.ForEachAsync (DOP"),
        new("A rate-limited downstream", "downstream-rate-limit", "the seeds say nothing about rate limits; seed 000's advice is a DOP", "Parallel.ForEachAsync (DOP"),
        new("A database with one writer", "price-sync", "seed 002: set the parallelism (\"not setting it is the worst of both worlds\")", "Parallel.ForEachAsync (DOP"),
        new("Files (read and hash)", "hash-files", "seed 000: Parallel.ForEach for CPU-bound work such as hashing files", "Parallel.ForEach ("),
    ];
}
