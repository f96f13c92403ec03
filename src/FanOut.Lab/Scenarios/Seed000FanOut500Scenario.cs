using FanOut.Lab.Results;
using FanOut.Lab.Running;
using FanOut.Lab.Strategies;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Scenarios;

/// <summary>Seed 000: 500 items x <c>Task.Delay(20)</c>, speed against peak concurrency, plus the blocking Parallel.ForEach anti-pattern.</summary>
public sealed class Seed000FanOut500Scenario : Scenario
{
    private const int Items = 500;
    private const int DelayMs = 20;
    private const int Limit = 50;

    /// <summary>The blocking case takes 20 to 52 s per run at any scale (thread injection is what it measures): one cold run says it.
    /// Its estimate is what it measured on the 2-core VM (46 to 52 s), not its ideal 20 ms.</summary>
    private static readonly RunPolicy s_starvingOnce = RunPolicy.Once("measured once, in a cold process: thread injection makes one run take 20 to 52 s at any scale") with
    {
        MeasuredRun = TimeSpan.FromSeconds(48),
    };

    /// <inheritdoc/>
    public override string Id => "seed000-fanout500";

    /// <inheritdoc/>
    public override string Purpose => "Waits: how fast 500 of them finish with each API, and how many each keeps in flight";

    /// <inheritdoc/>
    public override SeedReference Seed { get; } = new(
        "000_501b81ed9e953635.txt",
        "Pick the concurrency you can afford, then choose the API that enforces it. WhenAll ~24 ms (500 in flight), ForEachAsync DOP 50 ~210 ms (50), default ~640 ms (16 = ProcessorCount).",
        "16-core Ryzen 7, Windows 11, .NET 11; BenchmarkDotNet; peak column added by hand from the configuration");

    /// <inheritdoc/>
    public override string Describe(ScenarioSize size) => $"{Items} items x Task.Delay({size.Ms(DelayMs)}ms)";

    /// <inheritdoc/>
    public override IReadOnlyList<LabCase> Cases(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        var ms = size.Ms(DelayMs);
        Workload Delay() => new DelayWorkload(DelaySchedule.Fixed(ms, Items));
        return
        [
            new(new WhenAllStrategy(), Delay, Items, "~24 ms, 500 in flight"),
            new(new ParallelForEachAsyncStrategy(), Delay, Items, "~640 ms, 16 in flight (ProcessorCount)"),
            new(new ParallelForEachAsyncStrategy(Limit), Delay, Items, "~210 ms, 50 in flight"),
            new(new SemaphoreSlimWhenAllStrategy(Limit), Delay, Items, "recommended as the pre-.NET 6 gate; no number"),
            new(FanOutStrategy.Fixed(Limit), Delay, Items),
            new(FanOutStrategy.Adaptive(), Delay, Items),
            new(new ParallelForEachStrategy(), () => new SyncOverAsyncWorkload(DelaySchedule.Fixed(ms, Items)), Items, "\"starves the pool\"; no number", s_starvingOnce),
        ];
    }

    /// <inheritdoc/>
    public override string Verdict(ScenarioResult measured)
    {
        ArgumentNullException.ThrowIfNull(measured);
        var whenAll = Find.Case(measured, "Task.WhenAll");
        var byDefault = Find.Case(measured, "Parallel.ForEachAsync (default)");
        var dop50 = Find.Case(measured, "Parallel.ForEachAsync (DOP 50)");
        var blocking = Find.Case(measured, "Parallel.ForEach (default)");
        if (whenAll is null || byDefault is null || dop50 is null)
        {
            return "Not enough cases finished to compare with the seed.";
        }

        var verdict = $"Agrees on the trade-off: WhenAll {Find.Ms(whenAll.MeanMs)} with {whenAll.PeakInFlight:N0} in flight, DOP 50 {Find.Ms(dop50.MeanMs)} with {dop50.PeakInFlight:N0} " +
            $"(efficiency {dop50.Efficiency:P0}), default {Find.Ms(byDefault.MeanMs)} with {byDefault.PeakInFlight:N0} in flight. The default is {byDefault.MeanMs / whenAll.MeanMs:N0}x slower than WhenAll here " +
            $"(seed: ~25x) because the default limit is ProcessorCount = {Environment.ProcessorCount} on this machine, not 16: the gap is the limit, not the API.";
        if (Find.Case(measured, "FanOut (Fixed 50)") is { } fanOut)
        {
            verdict += $" FanOut Fixed(50) enforces the same 50 ({fanOut.PeakInFlight:N0} in flight, {Find.Ms(fanOut.MeanMs)}, efficiency {fanOut.Efficiency:P0}) and returns results.";
        }

        if (Find.Case(measured, "FanOut (adaptive)") is { LimitFinal: { } settled } adaptive)
        {
            verdict += $" FanOut adaptive, told nothing, climbed to {settled:N0} and took {Find.Ms(adaptive.MeanMs)}.";
        }

        if (blocking is not null)
        {
            verdict += $" The blocking Parallel.ForEach took {Find.Ms(blocking.MeanMs)} (efficiency {blocking.Efficiency:P0}) and grew the pool to {blocking.ThreadPoolThreadsPeak:N0} threads: the starvation the seed warns of, measured.";
            if (blocking.Heartbeat is { } starved)
            {
                verdict += $" A request arriving during it waited {Find.Ms(starved.PoolP50Ms)} for a pool thread at the median, {Find.Ms(starved.PoolP99Ms)} at p99 and up to {Find.Ms(starved.PoolMaxMs)}" +
                    (whenAll.Heartbeat is { } calm ? $" (during WhenAll: {Find.Ms(calm.PoolP99Ms)} at p99)." : ".");
            }
        }

        return verdict;
    }
}
