using FanOut.Limits.Adaptive;
using FanOut.Tests.Infrastructure;

namespace FanOut.Tests.Limits;

/// <summary>The adaptive law's drains (docs/adaptive.md, rule 3): where a drain leaves the limit when it ends.</summary>
public sealed class LawDrainTests
{
    private static readonly long s_ms = TimeSpan.TicksPerMillisecond;

    [Fact]
    public void DeeperDrain_EndingOnADownstreamThatGotSlower_SettlesNoLowerThanTheLevelItRanAt()
    {
        // Four servers sharing their time (10 ms each, in proportion above 4 in service): slow start's queue drains to 4, and
        // the drain's latency falls with its level, so it goes deeper, to 2. Meanwhile the downstream gets 3x slower. The
        // deeper drain's cohort then reads slower than the latency the model held: its rates describe the old downstream and
        // are forgotten, so the model holds no target. The limit stays at the level the drain ran at (2); it settled at the
        // minimum (1) before, from where a reading of 32 answers takes a second.
        var law = new BandwidthDelayLaw(new AdaptiveLimitOptions { InitialLimit = 4, TimeProvider = new ManualTimeProvider() });
        var inFlight = new PriorityQueue<(long Start, long End), long>();
        long now = 0, started = 0;
        int? deeperLevel = null;
        var settled = 0;
        while (settled == 0 && now < 5_000 * s_ms)
        {
            while (inFlight.Count < law.Limit)
            {
                var slower = deeperLevel is null ? 1 : 3;
                var jitter = 0.95 + (0.1 * (started++ % 7) / 7.0);
                var latency = (long)(slower * 10 * s_ms * Math.Max(1, (inFlight.Count + 1) / 4.0) * jitter);
                inFlight.Enqueue((now, now + latency), now + latency);
            }

            var (start, end) = inFlight.Dequeue();
            now = end;
            var wasDraining = law.Phase == BandwidthDelayPhase.Draining;
            var decision = law.OnAnswer(start, end - start, succeeded: true, overload: false, inFlight: inFlight.Count + 1, now);
            if (decision.Reason == LimitChangeReason.Remeasure && wasDraining)
            {
                deeperLevel = decision.Limit;
            }
            else if (deeperLevel is not null && law.Phase == BandwidthDelayPhase.Steady)
            {
                settled = law.Limit;
            }
        }

        Assert.Equal(2, deeperLevel);
        Assert.True(settled >= deeperLevel, $"the drain at {deeperLevel} ended at {settled}");
    }
}
