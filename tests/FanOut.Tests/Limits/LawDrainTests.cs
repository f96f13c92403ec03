using FanOut.Limits.Adaptive;
using FanOut.Tests.Infrastructure;

namespace FanOut.Tests.Limits;

/// <summary>The adaptive law's drains and readings (docs/adaptive.md, rules 1 and 4): where a drain leaves the limit, and which rate a reading takes.</summary>
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

    [Fact]
    public void Reading_WhoseAnswersSometimesFindAPermitBeingGivenBack_TakesItsOwnRate()
    {
        // On the real clock other workers give their permits back while an answer is read, so a loop's answer now and then
        // counts one call fewer than the permits granted: the limit looks idle for that gap. A busy loop over four servers
        // sharing their time, read so in two answers of five, must settle where the same loop read exactly does: counted as
        // idle, those gaps made a ratio of two noisy rates, clamped at 1, read its rate high (a limit of 6.3 against 5.6).
        var exact = MeanLimitOverSecondHalf(missedOneInFive: 0);
        var racy = MeanLimitOverSecondHalf(missedOneInFive: 2);

        Assert.True(racy >= exact * 0.95 && racy <= exact * 1.05, $"read exactly {exact:F2}, with the race {racy:F2}");
    }

    private static double MeanLimitOverSecondHalf(int missedOneInFive)
    {
        var law = new BandwidthDelayLaw(new AdaptiveLimitOptions { TimeProvider = new ManualTimeProvider() });
        var random = new Random(7);
        var inFlight = new PriorityQueue<(long Start, long End), long>();
        long now = 0, started = 0, sum = 0, samples = 0;
        var end = 20_000 * s_ms;
        while (now < end)
        {
            while (inFlight.Count < law.Limit)
            {
                var noise = Math.Exp(0.3 * random.NextStandardNormal());
                var latency = (long)(10 * s_ms * Math.Max(1, (inFlight.Count + 1) / 4.0) * noise);
                inFlight.Enqueue((now, now + latency), now + latency);
                started++;
            }

            var (start, answered) = inFlight.Dequeue();
            now = answered;
            var granted = started % 5 < missedOneInFive ? law.Limit + 1 : law.Limit;
            law.OnAnswer(start, answered - start, succeeded: true, overload: false, inFlight: inFlight.Count + 1, now, granted);
            if (now >= end / 2)
            {
                sum += law.Limit;
                samples++;
            }
        }

        return (double)sum / samples;
    }
}
