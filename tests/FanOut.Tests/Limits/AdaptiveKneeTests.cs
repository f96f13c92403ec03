using FanOut.Tests.Limits.Simulation;

using Xunit.Abstractions;

namespace FanOut.Tests.Limits;

/// <summary>
/// <see cref="AdaptiveLimitOptions.GrowthMustBuyThroughput"/>, the server's place (FanOut.AspNetCore's <c>DefaultLimit</c>):
/// a step of the limit is judged by Little's law (a growth whose latency rose with it bought no throughput and is taken back;
/// a step down whose latency fell with it cost none and is kept), so the limit holds at the downstream's capacity C, where
/// the latency band alone settles near 1.25 C. Against a pool of C with a FIFO queue beyond it (Npgsql's pool in front of a
/// database), on the simulation suite's <see cref="LimitSimulation"/> (a fake clock: a minute runs in well under a second).
/// </summary>
public sealed class AdaptiveKneeTests(ITestOutputHelper output)
{
    private static readonly TimeSpan s_serviceTime = TimeSpan.FromMilliseconds(40);

    private static readonly TimeSpan s_settled = TimeSpan.FromSeconds(30), s_end = TimeSpan.FromSeconds(60);

    /// <summary>A pool of <paramref name="capacity"/> that queues every call beyond it, in order.</summary>
    private static DownstreamState Pool(int capacity) => new() { Capacity = capacity, Queue = 100_000, Latency = s_serviceTime };

    /// <summary>The server's limit (its place's options), with or without the rule, on a closed loop against <paramref name="script"/>.</summary>
    private static (LimitSimulation Simulation, ConcurrencyLimit Limit) Run(DownstreamScript script, bool growthMustBuyThroughput, int seed)
    {
        var simulation = new LimitSimulation(script, seed);
        var limit = ConcurrencyLimit.Adaptive(simulation.Options(LawPlace.Named("server").Options with { GrowthMustBuyThroughput = growthMustBuyThroughput }));
        simulation.Run(limit, duration: s_end);
        return (simulation, limit);
    }

    /// <summary>The limit's mean over the timeline's samples from <paramref name="from"/> to <paramref name="until"/>.</summary>
    private static double MeanLimit(LimitSimulation simulation, TimeSpan from, TimeSpan until) =>
        simulation.Timeline.Where(s => s.At >= from && s.At < until).Average(s => s.Limit);

    /// <summary>Answers per second from <paramref name="from"/> to <paramref name="until"/>.</summary>
    private static double Throughput(LimitSimulation simulation, TimeSpan from, TimeSpan until) =>
        simulation.Successes.Count(t => t >= from && t < until) / (until - from).TotalSeconds;

    [BandMechanismTheory]
    [InlineData(4)]
    [InlineData(8)]
    public void GrowthMustBuyThroughput_PoolWithAQueue_HoldsTheLimitAtThePoolsSize(int capacity)
    {
        // Five seeds, the second half of a minute each: the mean limit within C..C+1 over the seeds (each within half a
        // permit below C to C+1: a step below the knee is kept now and then until the next probe finds it), at 95% of the
        // pool's throughput or more (a step down costs a window at C - 1 now and then). Without the rule: 5.3-5.9 at C = 4,
        // 11 at C = 8 (the next test).
        var means = new List<double>();
        var context = new List<string>();
        for (var seed = 1; seed <= 5; seed++)
        {
            var (simulation, _) = Run(DownstreamScript.Constant(Pool(capacity)), growthMustBuyThroughput: true, seed);
            var mean = MeanLimit(simulation, s_settled, s_end);
            var throughput = Throughput(simulation, s_settled, s_end) * s_serviceTime.TotalSeconds / capacity;
            means.Add(mean);
            context.Add($"seed {seed}: mean limit {mean:F2}, {throughput:P1} of the pool's throughput; {simulation.Timeline.Describe(s_end - TimeSpan.FromSeconds(5), s_end, 0.5)}");
            Assert.True(mean >= capacity - 0.5 && mean <= capacity + 1 && throughput >= 0.95, string.Join("\n", context));
        }

        output.WriteLine(string.Join("\n", context));
        Assert.InRange(means.Average(), capacity, capacity + 1);
    }

    [BandMechanismTheory]
    [InlineData(4)]
    [InlineData(8)]
    public void GrowthMustBuyThroughput_PoolThatRejectedForAWhile_HoldsTheLimitAtThePoolsSizeAgain(int capacity)
    {
        // The first five seconds the pool refuses what it cannot serve at once (no queue): below a level a downstream said no
        // at, its rejections bound growth and no knee is tested. Then it queues as the pool above does: the first growth that
        // buys no throughput makes that level a knee, and the knee tests find C again, not the latency band's quarter above it.
        var script = DownstreamScript.Phases((TimeSpan.Zero, Pool(capacity) with { Queue = 0 }), (TimeSpan.FromSeconds(5), Pool(capacity)));
        var context = new List<string>();
        for (var seed = 1; seed <= 5; seed++)
        {
            var (simulation, _) = Run(script, growthMustBuyThroughput: true, seed);
            var mean = MeanLimit(simulation, s_settled, s_end);
            context.Add($"seed {seed}: mean limit {mean:F2}; {simulation.Timeline.Describe(s_end - TimeSpan.FromSeconds(5), s_end, 0.5)}");
            Assert.True(mean >= capacity - 0.5 && mean <= capacity + 1, string.Join("\n", context));
        }

        output.WriteLine(string.Join("\n", context));
    }

    [Theory]
    [InlineData(4)]
    [InlineData(8)]
    public void WithoutGrowthMustBuyThroughput_PoolWithAQueue_SettlesNearAQuarterAboveThePoolsSize(int capacity)
    {
        // The default (every place but the server): the latency band holds between 1.25 and 1.5 times the baseline, so a
        // queue of a quarter of C or more is kept, whatever the step before bought.
        var means = Enumerable.Range(1, 5).Select(seed =>
        {
            var (simulation, _) = Run(DownstreamScript.Constant(Pool(capacity)), growthMustBuyThroughput: false, seed);
            return MeanLimit(simulation, s_settled, s_end);
        }).ToArray();

        output.WriteLine(string.Join(", ", means.Select(m => m.ToString("F2", System.Globalization.CultureInfo.InvariantCulture))));
        Assert.True(means.Average() > 1.2 * capacity, string.Join(", ", means));
    }

    [BandMechanismFact]
    public void GrowthMustBuyThroughput_PoolGrowsFromFourToEight_ProbesFindTheNewKnee()
    {
        // Held at 4 against a pool of 4; at 30 s the pool grows to 8. The spaced probes above 4 pass from then on and their
        // steps double, so the limit reaches 7 within 30 windows (of 32 answers: 960 answers; 8-21 measured over five seeds),
        // and holds at the new pool's size afterwards.
        var rise = TimeSpan.FromSeconds(30);
        for (var seed = 1; seed <= 5; seed++)
        {
            var (simulation, limit) = Run(DownstreamScript.Phases((TimeSpan.Zero, Pool(4)), (rise, Pool(8))), growthMustBuyThroughput: true, seed);
            var before = MeanLimit(simulation, TimeSpan.FromSeconds(15), rise);
            var reached = simulation.Timeline.FirstOrDefault(s => s.At >= rise && s.Limit >= 7).At;
            var answers = simulation.Successes.Count(t => t >= rise && t < reached);
            var after = MeanLimit(simulation, rise + TimeSpan.FromSeconds(15), s_end);
            var context = $"seed {seed}: mean limit {before:F2} before the rise, 7 reached {(reached - rise).TotalSeconds:F2} s after it ({answers} answers), mean {after:F2} from 15 s after it; {simulation.Timeline.Describe(rise - TimeSpan.FromSeconds(1), rise + TimeSpan.FromSeconds(6), 0.5)}";
            output.WriteLine(context);
            Assert.True(before >= 3.5 && before <= 5, context);
            Assert.True(reached > rise && answers <= 30 * 32, context);
            Assert.True(after >= 7.5 && after <= 9, context);
        }
    }
}
