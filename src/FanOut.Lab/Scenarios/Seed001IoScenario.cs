using FanOut.Lab.Results;
using FanOut.Lab.Strategies;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Scenarios;

/// <summary>Seed 001, I/O half: OperationCount x OperationDurationMs of <c>Task.Delay</c>, WhenAll against ForEachAsync at its default limit.</summary>
public sealed class Seed001IoScenario : Scenario
{
    private static readonly int[] s_fullCounts = [1, 10, 50, 100];
    private static readonly int[] s_fullDurations = [10, 100, 500, 1000];
    private static readonly int[] s_defaultCounts = [10, 100];
    private static readonly int[] s_defaultDurations = [10, 100];

    /// <inheritdoc/>
    public override string Id => "seed001-io";

    /// <inheritdoc/>
    public override string Purpose => "I/O waits: Task.WhenAll against Parallel.ForEachAsync at its default limit";

    /// <inheritdoc/>
    public override SeedReference Seed { get; } = new(
        "001_8d33c7003962ea02.txt",
        "Prefer WhenAll for I/O. 100 x 10 ms: WhenAll 15.49 ms, ForEachAsync 108.01 ms; 100 x 1000 ms: 1,011.43 ms vs 7,066.67 ms (7 waves of 16).",
        "AMD Ryzen 7 5700X, 16 logical cores, Windows 11, .NET 8; BenchmarkDotNet 0.13.11");

    /// <inheritdoc/>
    public override string Describe(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        var counts = size.Pick(s_fullCounts, s_defaultCounts);
        var durations = size.Pick(s_fullDurations, s_defaultDurations);
        return $"OperationCount {{{string.Join(", ", counts)}}} x Task.Delay {{{string.Join(", ", durations.Select(size.Ms))}}} ms" + (size.Full ? " (seed's full grid)" : " (subset; --full for the seed's grid)");
    }

    /// <inheritdoc/>
    public override IReadOnlyList<LabCase> Cases(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        var cases = new List<LabCase>();
        foreach (var count in size.Pick(s_fullCounts, s_defaultCounts))
        {
            foreach (var duration in size.Pick(s_fullDurations, s_defaultDurations))
            {
                var ms = size.Ms(duration);
                Workload Delay() => new DelayWorkload(DelaySchedule.Fixed(ms, count));
                cases.Add(new(new WhenAllStrategy(), Delay, count, SeedNumber(count, duration, whenAll: true)));
                cases.Add(new(new ParallelForEachAsyncStrategy(), Delay, count, SeedNumber(count, duration, whenAll: false)));
                cases.Add(new(FanOutStrategy.Fixed(50), Delay, count));
                cases.Add(new(FanOutStrategy.Adaptive(), Delay, count));
            }
        }

        return cases;
    }

    /// <inheritdoc/>
    public override string Verdict(ScenarioResult measured)
    {
        ArgumentNullException.ThrowIfNull(measured);
        var count = Find.Max(measured, "itemCount");
        var delay = Find.Max(measured, "delayMs");
        if (count is not { } n || delay is not { } d)
        {
            return "Not enough cases finished to compare with the seed.";
        }

        var whenAll = Find.Case(measured, "Task.WhenAll", ("itemCount", n), ("delayMs", d));
        var forEach = Find.Case(measured, "Parallel.ForEachAsync", ("itemCount", n), ("delayMs", d));
        if (whenAll is null || forEach is null)
        {
            return "Not enough cases finished to compare with the seed.";
        }

        var waves = (n + Environment.ProcessorCount - 1) / Environment.ProcessorCount;
        return $"Agrees on the numbers, not the reason: at {n} x {d} ms WhenAll took {Find.Ms(whenAll.MeanMs)} and ForEachAsync {Find.Ms(forEach.MeanMs)}, " +
            $"{forEach.MeanMs / whenAll.MeanMs:N1}x slower because its default limit is ProcessorCount = {Environment.ProcessorCount} here ({waves} waves; the seed's 16 cores gave 7). " +
            "ForEachAsync is not slow at I/O: its default limit is; give it a DOP and it matches (see seed000).";
    }

    private static string? SeedNumber(int count, int duration, bool whenAll) => (count, duration) switch
    {
        (100, 10) => whenAll ? "15.49 ms" : "108.01 ms",
        (100, 1000) => whenAll ? "1,011.43 ms" : "7,066.67 ms",
        _ => null,
    };
}
