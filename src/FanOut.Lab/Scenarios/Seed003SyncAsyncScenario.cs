using FanOut.Lab.Results;
using FanOut.Lab.Strategies;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Scenarios;

/// <summary>Seed 003: 5 items x 1000 ms: blocking loop, Task.Delay with WhenAll, ValueTask, and ForEachAsync; time and allocations.</summary>
public sealed class Seed003SyncAsyncScenario : Scenario
{
    private const int Items = 5;
    private const int DelayMs = 1000;

    /// <inheritdoc/>
    public override string Id => "seed003-sync-async";

    /// <inheritdoc/>
    public override string Purpose => "A few long waits: a blocking loop against Task, ValueTask and ForEachAsync (time and allocations)";

    /// <inheritdoc/>
    public override SeedReference Seed { get; } = new(
        "003_64d182cba7046d91.txt",
        "All ~1.005 s; allocations 400 B / 1016 B / 1576 B / 3800 B (sync / async / ValueTask / ForEachAsync); use ForEachAsync only for CPU-bound work.",
        "Intel i7-1370P, 20 logical cores, .NET 9.0.2; BenchmarkDotNet");

    /// <inheritdoc/>
    public override string Describe(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        return $"{Items} items x {size.Ms(DelayMs)} ms";
    }

    /// <inheritdoc/>
    public override IReadOnlyList<LabCase> Cases(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        var ms = size.Ms(DelayMs);
        Workload Delay() => new DelayWorkload(DelaySchedule.Fixed(ms, Items));
        return
        [
            new(new SynchronousLoopStrategy(), () => new SleepWorkload(DelaySchedule.Fixed(ms, Items)), Items, "1.008 s, 400 B (one call, not five)"),
            new(new WhenAllStrategy(), Delay, Items, "1.005 s, 1016 B (one call)"),
            new(new ValueTaskProjectionStrategy(), Delay, Items, "1.004 s, 1576 B (one call)"),
            new(new ParallelForEachAsyncStrategy(), Delay, Items, "1.007 s, 3800 B"),
            new(FanOutStrategy.Fixed(Environment.ProcessorCount), Delay, Items),
            new(FanOutStrategy.Adaptive(), Delay, Items),
        ];
    }

    /// <inheritdoc/>
    public override string Verdict(ScenarioResult measured)
    {
        ArgumentNullException.ThrowIfNull(measured);
        var sync = Find.Case(measured, "Synchronous loop");
        var whenAll = Find.Case(measured, "Task.WhenAll");
        var valueTask = Find.Case(measured, "ValueTask projection");
        var forEach = Find.Case(measured, "Parallel.ForEachAsync");
        if (sync is null || whenAll is null || forEach is null)
        {
            return "Not enough cases finished to compare with the seed.";
        }

        var waves = (Items + Environment.ProcessorCount - 1) / Environment.ProcessorCount;
        var verdict = $"Disagrees: the seed's sync, async and ValueTask methods each awaited one delay while ForEachAsync did five, so \"all ~1 s\" compared different work. " +
            $"Over the same {Items} items: blocking loop {Find.Ms(sync.MeanMs)}, WhenAll {Find.Ms(whenAll.MeanMs)}, ForEachAsync {Find.Ms(forEach.MeanMs)} " +
            $"({waves} waves at ProcessorCount = {Environment.ProcessorCount}; the seed's 20 cores hid its limit).";
        if (valueTask is not null)
        {
            verdict += $" Allocations: WhenAll {whenAll.AllocatedBytes:N0} B, ValueTask {valueTask.AllocatedBytes:N0} B, ForEachAsync {forEach.AllocatedBytes:N0} B: a ValueTask saves nothing when the delay really waits, since the timer and its state machine are allocated anyway.";
        }

        return verdict;
    }
}
