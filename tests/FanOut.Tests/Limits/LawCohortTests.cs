using FanOut.Limits.Adaptive;
using FanOut.Tests.Infrastructure;

namespace FanOut.Tests.Limits;

/// <summary>The adaptive law's cohorts (docs/adaptive.md, rule 2): a cohort is judged once, whatever order its answers and others' come in.</summary>
public sealed class LawCohortTests
{
    private static readonly long s_ms = TimeSpan.TicksPerMillisecond;

    [Fact]
    public void SlowStartCohort_StartsCountedOneTooMany_IsJudgedOnceTheItemsStillOutAreSlowerThanItsMedian()
    {
        // Sixteen items started a millisecond apart. The first answer counts a seventeenth in flight that started as it came in
        // (the count of starts is read from the calls in flight), so the cohort is taken as 17 where 16 belong to it. All 16
        // answer within 8 ms of its close, sooner than their median: the seventeenth might still have come in faster.
        var law = new BandwidthDelayLaw(new AdaptiveLimitOptions { InitialLimit = 16, TimeProvider = new ManualTimeProvider() });
        for (var i = 0; i < 16; i++)
        {
            var now = (100 * s_ms) + (i * s_ms / 2);
            law.OnAnswer(i * s_ms, now - (i * s_ms), succeeded: true, overload: false, inFlight: 17 - i, now);
        }

        // Later answers are of items outside the cohort: by the time they come in, every item still out has been out longer
        // than the cohort's median, so it is known (the 9th of the 16 answers, sorted: 96.5 ms). Before, only an answer of the
        // cohort's own could close it, and none was left: slow start never judged a cohort again.
        for (var i = 0; i < 4; i++)
        {
            var now = (300 + i) * s_ms;
            law.OnAnswer(100 * s_ms, now - (100 * s_ms), succeeded: true, overload: false, inFlight: 4 - i, now);
        }

        Assert.Equal(96.5 * s_ms, law.Baseline, precision: 3);
    }

    [Fact]
    public void SlowStartCohort_MedianTenTimesTheReferenceWithTheLowerQuartileStillAtIt_IsAQueue()
    {
        // I/O then CPU on few cores: bodies starve the threads, so past some level most answers come ten times later while a
        // quarter still come at once (a real run read a lower quartile of 20 ms under a median of 226). Such a spread (3.4 in
        // logs) is wider than any heavy tail's; were the queue test to allow for all of it, a median had to rise 30x to read as
        // a queue and slow start ran on for good. Capped at a heavy tail's spread (MostSpread), the 10x rise ends slow start
        // on its second queued cohort: within three slow answers' time of the change.
        var law = new BandwidthDelayLaw(new AdaptiveLimitOptions { InitialLimit = 16, TimeProvider = new ManualTimeProvider() });
        var starved = 40 * s_ms;
        var inFlight = new PriorityQueue<(long Start, long End), long>();
        long now = 0, started = 0;
        while (law.InSlowStart && now < starved + (1000 * s_ms))
        {
            while (inFlight.Count < law.Limit)
            {
                // From 40 ms on, 5 of every 16 items answer in 10 ms, 11 in 100 ms; before, all in 10 ms (jitter of a third).
                var slow = now >= starved && started % 16 >= 5;
                var latency = ((slow ? 100 : 10) * s_ms) + (started % 3 * s_ms / 3);
                inFlight.Enqueue((now, now + latency), now + latency);
                started++;
            }

            var (start, end) = inFlight.Dequeue();
            now = end;
            law.OnAnswer(start, end - start, succeeded: true, overload: false, inFlight: inFlight.Count + 1, now);
        }

        var after = (now - starved) / (double)s_ms;
        Assert.False(law.InSlowStart, $"still in slow start at {law.Limit}, {after:F0} ms after the change");
        Assert.True(after <= 300, $"slow start ended {after:F0} ms after the change");
    }
}
