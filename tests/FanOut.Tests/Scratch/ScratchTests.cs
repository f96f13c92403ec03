using FanOut.Tests.Infrastructure;

namespace FanOut.Tests.Scratch;

public sealed class ScratchTests
{
    [Theory]
    [InlineData(4, 1, ServiceTimes.LogNormal, 20, Overflow.Queue)]
    [InlineData(2, 1, ServiceTimes.Steady, 5, Overflow.Share)]
    public void Scratch_Trace(int capacity, int seed, ServiceTimes st, int ms, Overflow overflow)
    {
        var simulation = new DownstreamSimulation(capacity, overflow, TimeSpan.FromMilliseconds(ms), seed, serviceTimes: st);
        var limit = (AdaptiveConcurrencyLimit)ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { TimeProvider = simulation.Clock });
        simulation.Run(limit, 200 * capacity);
        var changes = new List<string>();
        var last = -1;
        foreach (var (at, l) in simulation.Trace)
        {
            if (l != last) { changes.Add($"{at.TotalMilliseconds:F0}:{l}"); last = l; }
        }
        Assert.Fail($"baseline {limit.Baseline.TotalMilliseconds:F1} slow {limit.InSlowStart} " + string.Join(" ", changes.Take(80)));
    }
}
