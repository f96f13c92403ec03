using FanOut.Lab.Results;
using FanOut.Lab.Running;
using FanOut.Lab.Strategies;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Scenarios;

/// <summary>Seed 002: 100 items with a random 10-50 ms delay: a Channel with every writer at once against TPL at DOP 4, 40 and default.</summary>
public sealed class Seed002ChannelsScenario : Scenario, IRuntimeVariantVerdict
{
    private const int Items = 100;
    private const int MinMs = 10;
    private const int MaxMs = 50;

    /// <summary>Fixed so every strategy, and every run, sees the same delays.</summary>
    private const int RandomSeed = 2;

    /// <inheritdoc/>
    public override string Id => "seed002-channels";

    /// <inheritdoc/>
    public override string Purpose => "Random waits: a Channel with every writer at once against ForEachAsync at several limits";

    /// <inheritdoc/>
    public override SeedReference Seed { get; } = new(
        "002_471f48bc28b1ada9.txt",
        "Channels ~12x faster than TPL at DOP 4; thread count never above 19; not setting the parallelism is the worst of both worlds. Channel 68 ms, Parallel.For@4 799 ms, ForEachAsync@4 754 ms, @40 100 ms, default 384 ms; threads 8 at start, 19 at end.",
        "one Stopwatch run, hardware not given");

    /// <inheritdoc/>
    public override string Describe(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        return $"{Items} items x random {size.Ms(MinMs)}-{size.Ms(MaxMs)} ms (seed {RandomSeed})";
    }

    /// <inheritdoc/>
    public override IReadOnlyList<LabCase> Cases(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        var min = size.Ms(MinMs);
        var max = Math.Max(min + 1, size.Ms(MaxMs));
        DelaySchedule Schedule() => DelaySchedule.Uniform(min, max, RandomSeed, Items);
        Workload Delay() => new DelayWorkload(Schedule());
        return
        [
            new(new ChannelAllWritersStrategy(), Delay, Items, "68 ms"),
            new(new ParallelForStrategy(4), () => new SleepWorkload(Schedule()), Items, "799 ms"),
            new(new ParallelForEachAsyncStrategy(4), Delay, Items, "754 ms"),
            new(new ParallelForEachAsyncStrategy(40), Delay, Items, "100 ms"),
            new(new ParallelForEachAsyncStrategy(), Delay, Items, "384 ms"),
            new(new ChannelWorkersStrategy(4), Delay, Items, "described, not measured"),
            new(FanOutStrategy.Fixed(4), Delay, Items),
            new(FanOutStrategy.Adaptive(), Delay, Items),
        ];
    }

    /// <inheritdoc/>
    public override string Verdict(ScenarioResult measured)
    {
        ArgumentNullException.ThrowIfNull(measured);
        var channel = Find.Case(measured, "Channel (all writers)");
        var dop4 = Find.Case(measured, "Parallel.ForEachAsync (DOP 4)");
        var workers4 = Find.Case(measured, "Channel (4 workers)");
        if (channel is null || dop4 is null)
        {
            return "Not enough cases finished to compare with the seed.";
        }

        var threads = measured.Cases.Where(c => c.Succeeded).Select(c => c.ProcessThreadsPeak).DefaultIfEmpty().Max();
        var verdict = $"Agrees on the numbers, disagrees on the cause: the all-writers Channel ran {channel.PeakInFlight:N0} items at once, WhenAll's unbounded concurrency, " +
            $"so it took {Find.Ms(channel.MeanMs)} against {Find.Ms(dop4.MeanMs)} for ForEachAsync at DOP 4 ({dop4.MeanMs / channel.MeanMs:N1}x).";
        if (workers4 is not null)
        {
            verdict += $" A Channel held to 4 workers took {Find.Ms(workers4.MeanMs)}, the same as DOP 4: the limit decides, not the channel.";
        }

        return verdict + $" Peak OS threads here: {threads:N0} (seed: never above 19).";
    }

    /// <inheritdoc/>
    /// <remarks>The seed's special note: with its "NativeAOT" build ForEachAsync @ 40 beats the Channel, and trimming penalizes the
    /// Channel. A difference counts only when it is larger than the two means' error bars together.</remarks>
    public string VariantVerdict(RuntimeVariant variant, ScenarioResult jit, ScenarioResult published)
    {
        ArgumentNullException.ThrowIfNull(variant);
        ArgumentNullException.ThrowIfNull(jit);
        ArgumentNullException.ThrowIfNull(published);
        var channel = Find.Case(published, "Channel (all writers)");
        var dop40 = Find.Case(published, "Parallel.ForEachAsync (DOP 40)");
        var jitChannel = Find.Case(jit, "Channel (all writers)");
        var jitDop40 = Find.Case(jit, "Parallel.ForEachAsync (DOP 40)");
        if (channel is null || dop40 is null || jitChannel is null || jitDop40 is null)
        {
            return $"{variant.Label}: not enough cases finished to compare.";
        }

        static bool Below(CaseResult a, CaseResult b) => b.MeanMs - a.MeanMs > (a.ErrorMs ?? 0) + (b.ErrorMs ?? 0);
        var head = $"{variant.Label} build: Channel (all writers) {Find.Ms(channel.MeanMs)} (JIT {Find.Ms(jitChannel.MeanMs)}), ForEachAsync @ 40 {Find.Ms(dop40.MeanMs)} (JIT {Find.Ms(jitDop40.MeanMs)})";
        var beats = Below(dop40, channel)
            ? "ForEachAsync @ 40 beat the Channel"
            : "ForEachAsync @ 40 did not beat the Channel (the all-writers Channel runs 100 at once, @ 40 needs 3 waves: the build cannot change that)";
        var penalty = Below(jitChannel, channel)
            ? $"the Channel was slower than under the JIT by {channel.MeanMs - jitChannel.MeanMs:N1} ms, beyond the error bars"
            : "the Channel was not slower than under the JIT beyond the error bars";
        return $"{head}: {beats}; {penalty}.";
    }
}
