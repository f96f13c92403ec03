using FanOut.Tests.Limits.Simulation;

using Xunit.Abstractions;

namespace FanOut.Tests.Limits;

/// <summary>
/// The server's place (FanOut.AspNetCore's <c>DefaultLimit</c>) against a pool of C with a FIFO queue beyond it (Npgsql's
/// pool in front of a database), on the simulation suite's <see cref="LimitSimulation"/> (a fake clock: a minute runs in
/// well under a second): the law holds the room its target keeps above what the downstream carries, a quarter of C.
/// </summary>
public sealed class AdaptivePoolWithAQueueTests(ITestOutputHelper output)
{
    private static readonly TimeSpan s_serviceTime = TimeSpan.FromMilliseconds(40);

    private static readonly TimeSpan s_settled = TimeSpan.FromSeconds(30), s_end = TimeSpan.FromSeconds(60);

    /// <summary>A pool of <paramref name="capacity"/> that queues every call beyond it, in order.</summary>
    private static DownstreamState Pool(int capacity) => new() { Capacity = capacity, Queue = 100_000, Latency = s_serviceTime };

    /// <summary>The server's limit (its place's options, with <paramref name="headroom"/> when given) on a closed loop against <paramref name="script"/>.</summary>
    private static (LimitSimulation Simulation, ConcurrencyLimit Limit) Run(DownstreamScript script, int seed, double? headroom = null)
    {
        var simulation = new LimitSimulation(script, seed);
        var options = LawPlace.Named("server").Options;
        var limit = ConcurrencyLimit.Adaptive(simulation.Options(headroom is { } room ? options with { Headroom = room } : options));
        simulation.Run(limit, duration: s_end);
        return (simulation, limit);
    }

    /// <summary>The limit's mean over the timeline's samples from <paramref name="from"/> to <paramref name="until"/>.</summary>
    private static double MeanLimit(LimitSimulation simulation, TimeSpan from, TimeSpan until) =>
        simulation.Timeline.Where(s => s.At >= from && s.At < until).Average(s => s.Limit);

    /// <summary>Answers per second from <paramref name="from"/> to <paramref name="until"/>.</summary>
    private static double Throughput(LimitSimulation simulation, TimeSpan from, TimeSpan until) =>
        simulation.Successes.Count(t => t >= from && t < until) / (until - from).TotalSeconds;

    [Theory]
    [InlineData(4)]
    [InlineData(8)]
    public void Adaptive_PoolWithAQueueAtTheServersPlace_SettlesNearAQuarterAboveThePoolsSize(int capacity)
    {
        // The target is the bandwidth-delay product with a quarter of room (rate noise and the tail), so about a quarter of C
        // waits in the pool: every connection stays busy.
        var means = Enumerable.Range(1, 5).Select(seed =>
        {
            var (simulation, _) = Run(DownstreamScript.Constant(Pool(capacity)), seed);
            return MeanLimit(simulation, s_settled, s_end);
        }).ToArray();

        output.WriteLine(string.Join(", ", means.Select(m => m.ToString("F2", System.Globalization.CultureInfo.InvariantCulture))));
        Assert.True(means.Average() > 1.2 * capacity, string.Join(", ", means));
    }

    [Theory]
    [InlineData(4)]
    [InlineData(8)]
    public void Adaptive_HeadroomOfOne_HoldsNearerThePoolsSize(int capacity)
    {
        // AdaptiveLimitOptions.Headroom is the target's room above what the downstream carries: at 1 the limit holds nearer
        // C, where a service's admitted requests do not wait in the pool, with the same throughput.
        double Mean(double? headroom, Func<LimitSimulation, double> measure) => Enumerable.Range(1, 5).Average(seed =>
            measure(Run(DownstreamScript.Constant(Pool(capacity)), seed, headroom).Simulation));

        var room = Mean(null, s => MeanLimit(s, s_settled, s_end));
        var none = Mean(1.0, s => MeanLimit(s, s_settled, s_end));
        var throughput = Mean(1.0, s => Throughput(s, s_settled, s_end)) / Mean(null, s => Throughput(s, s_settled, s_end));
        output.WriteLine($"mean limit {room:F2} at 1.25, {none:F2} at 1; throughput {throughput:F2}x");
        Assert.True(none <= room - (0.1 * capacity), $"{none:F2} at 1 against {room:F2} at 1.25");
        Assert.True(throughput >= 0.95, $"throughput {throughput:F2}x");
    }
}
