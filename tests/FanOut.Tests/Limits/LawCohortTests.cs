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
}
