using FanOut.Tests.Limits.Simulation;

using Xunit.Abstractions;

namespace FanOut.Tests.Limits;

/// <summary>
/// The server's place (FanOut.AspNetCore's <c>DefaultLimit</c>) against a pool of C with a FIFO queue beyond it (Npgsql's
/// pool in front of a database), on the simulation suite's <see cref="LimitSimulation"/> (a fake clock: a minute runs in
/// well under a second): the law holds the room its target keeps above what the downstream carries, a quarter of C.
/// </summary>
public sealed class AdaptiveKneeTests(ITestOutputHelper output)
{
    private static readonly TimeSpan s_serviceTime = TimeSpan.FromMilliseconds(40);

    private static readonly TimeSpan s_settled = TimeSpan.FromSeconds(30), s_end = TimeSpan.FromSeconds(60);

    /// <summary>A pool of <paramref name="capacity"/> that queues every call beyond it, in order.</summary>
    private static DownstreamState Pool(int capacity) => new() { Capacity = capacity, Queue = 100_000, Latency = s_serviceTime };

    /// <summary>The server's limit (its place's options) on a closed loop against <paramref name="script"/>.</summary>
    private static (LimitSimulation Simulation, ConcurrencyLimit Limit) Run(DownstreamScript script, int seed)
    {
        var simulation = new LimitSimulation(script, seed);
        var limit = ConcurrencyLimit.Adaptive(simulation.Options(LawPlace.Named("server").Options));
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
}
