using FanOut.Lab.Results;
using FanOut.Lab.Strategies;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Scenarios;

/// <summary>Seed 004: TaskCount x WorkCount x IoDelayMs of 4 CPU loops with 3 delays between: projection, Task.Run projection, ForEachAsync.</summary>
public sealed class Seed004MixedScenario : Scenario
{
    private static readonly int[] s_fullTasks = [25, 50];
    private static readonly int[] s_fullWork = [10_000_000, 50_000_000];
    private static readonly int[] s_fullDelays = [0, 1];
    private static readonly int[] s_defaultWork = [10_000_000];

    /// <inheritdoc/>
    public override string Id => "seed004-mixed";

    /// <inheritdoc/>
    public override string Purpose => "Mixed CPU and waits: a plain projection against Task.Run and ForEachAsync";

    /// <inheritdoc/>
    public override SeedReference Seed { get; } = new(
        "004_8b07686f852b60f4.txt",
        "A task parallelises only after it really yields; Task.Run projection and ForEachAsync are ~5x faster than plain projection when CPU-bound. 25/10M/0: 289.62 / 57.54 / 56.25 ms; 50/50M/0: 2,896.39 / 520.02 / 528.44; 50/50M/1: 835.96 / 512.02 / 543.74.",
        "BenchmarkDotNet, hardware not given");

    /// <inheritdoc/>
    public override string Describe(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        var work = size.Pick(s_fullWork, s_defaultWork);
        return $"TaskCount {{25, 50}} x WorkCount {{{string.Join(", ", work.Select(w => size.Work(w).ToString("N0", System.Globalization.CultureInfo.InvariantCulture)))}}} x IoDelayMs {{0, {size.Ms(1)}}}" + (size.Full ? " (seed's full grid)" : " (subset; --full for the seed's grid)");
    }

    /// <inheritdoc/>
    public override IReadOnlyList<LabCase> Cases(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        var cases = new List<LabCase>();
        foreach (var tasks in s_fullTasks)
        {
            foreach (var workCount in size.Pick(s_fullWork, s_defaultWork))
            {
                foreach (var delay in s_fullDelays)
                {
                    var work = size.Work(workCount);
                    var ms = size.Ms(delay);
                    var count = tasks;
                    Workload Mixed() => new MixedWorkload(work, ms, count);
                    var seed = SeedNumbers(tasks, workCount, delay);
                    cases.Add(new(new WhenAllStrategy(), Mixed, tasks, seed?[0]));
                    cases.Add(new(new TaskRunWhenAllStrategy(), Mixed, tasks, seed?[1]));
                    cases.Add(new(new ParallelForEachAsyncStrategy(), Mixed, tasks, seed?[2]));
                    cases.Add(new(FanOutStrategy.Fixed(Environment.ProcessorCount), Mixed, tasks));
                    cases.Add(new(FanOutStrategy.Adaptive(), Mixed, tasks));
                }
            }
        }

        return cases;
    }

    /// <inheritdoc/>
    public override string Verdict(ScenarioResult measured)
    {
        ArgumentNullException.ThrowIfNull(measured);
        var work = Find.Max(measured, "workCount");
        if (work is not { } w)
        {
            return "Not enough cases finished to compare with the seed.";
        }

        var plain = Find.Case(measured, "Task.WhenAll", ("itemCount", 25), ("workCount", w), ("ioDelayMs", 0));
        var run = Find.Case(measured, "Task.Run + WhenAll", ("itemCount", 25), ("workCount", w), ("ioDelayMs", 0));
        var forEach = Find.Case(measured, "Parallel.ForEachAsync", ("itemCount", 25), ("workCount", w), ("ioDelayMs", 0));
        if (plain is null || run is null || forEach is null)
        {
            return "Not enough cases finished to compare with the seed.";
        }

        var verdict = $"Agrees on the mechanism: with IoDelayMs 0 the plain projection never yields, so it ran {plain.PeakInFlight:N0} item at a time " +
            $"({Find.Ms(plain.MeanMs)}, efficiency {plain.Efficiency:P0}); Task.Run took {Find.Ms(run.MeanMs)} and ForEachAsync {Find.Ms(forEach.MeanMs)}. " +
            $"The speed-up is {plain.MeanMs / Math.Min(run.MeanMs, forEach.MeanMs):N1}x here, not ~5x: it is capped by the {Environment.ProcessorCount} cores of this machine.";
        if (run.Heartbeat is { } starved && forEach.Heartbeat is { } bounded)
        {
            verdict += $" Starvation (the seed: Task.Run \"generally starves out other threads\"): a request arriving during the Task.Run projection waited {Find.Ms(starved.PoolP50Ms)} for a pool thread at the median, " +
                $"{Find.Ms(starved.PoolP99Ms)} at p99 and up to {Find.Ms(starved.PoolMaxMs)}; during ForEachAsync (DOP {Environment.ProcessorCount}) {Find.Ms(bounded.PoolP50Ms)}, {Find.Ms(bounded.PoolP99Ms)} and {Find.Ms(bounded.PoolMaxMs)}" +
                (plain.Heartbeat is { } sequential ? $"; during the plain projection (one item at a time on the caller's thread) {Find.Ms(sequential.PoolP99Ms)} at p99." : ".");
        }

        return verdict;
    }

    private static string[]? SeedNumbers(int tasks, int work, int delay) => (tasks, work, delay) switch
    {
        (25, 10_000_000, 0) => ["289.62 ms", "57.54 ms", "56.25 ms"],
        (25, 10_000_000, 1) => ["90.59 ms", "52.30 ms", "65.52 ms"],
        (25, 50_000_000, 0) => ["1,443.16 ms", "267.03 ms", "295.70 ms"],
        (25, 50_000_000, 1) => ["450.27 ms", "272.23 ms", "301.33 ms"],
        (50, 10_000_000, 0) => ["588.07 ms", "107.31 ms", "106.08 ms"],
        (50, 10_000_000, 1) => ["171.52 ms", "105.20 ms", "123.23 ms"],
        (50, 50_000_000, 0) => ["2,896.39 ms", "520.02 ms", "528.44 ms"],
        (50, 50_000_000, 1) => ["835.96 ms", "512.02 ms", "543.74 ms"],
        _ => null,
    };
}
