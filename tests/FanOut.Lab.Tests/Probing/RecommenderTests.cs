using FanOut.Lab.Probing;

using static FanOut.Lab.Tests.Probing.LevelResults;

namespace FanOut.Lab.Tests.Probing;

public sealed class RecommenderTests
{
    [Fact]
    public void AtCapacity_ExactCapacity_IsFinalWithCodeForThatLimit()
    {
        var recommendation = Recommender.AtCapacity(Level(12, 290, p99Ms: 45), Level(13, 291, rejected: 25), "was beyond it: 7.7% rejected (429/503)", 12.0);
        Assert.Equal(RecommendationStatus.Final, recommendation.Status);
        Assert.True(recommendation.IsFinal);
        Assert.Equal(12, recommendation.Limit);
        Assert.Null(recommendation.RatePerSecond);
        Assert.Equal(290, recommendation.OkPerSecond);
        Assert.Contains("ConcurrencyLimit.Fixed(12)", recommendation.Code!.FanOut, StringComparison.Ordinal);
        Assert.DoesNotContain("RateLimiter", recommendation.Code.FanOut, StringComparison.Ordinal);
        Assert.Contains("MaxDegreeOfParallelism = 12", recommendation.Code.ParallelForEachAsync, StringComparison.Ordinal);
        Assert.Contains("new SemaphoreSlim(12)", recommendation.Code.SemaphoreSlim, StringComparison.Ordinal);
        Assert.Contains("the capacity is 12 at once", recommendation.Reason, StringComparison.Ordinal);
        Assert.Contains("13 was beyond it", recommendation.Reason, StringComparison.Ordinal);
        Assert.DoesNotContain('\n', recommendation.Reason);
    }

    [Fact]
    public void AtCapacity_TheReasonCountsTheFailuresOfTheLevelWithin()
    {
        // The sentence agrees with the table beside it: a level within capacity may have had a few races at the capacity.
        var clean = Recommender.AtCapacity(Level(12, 290), Level(13, 291, rejected: 25), "was beyond it", null);
        var raced = Recommender.AtCapacity(Level(12, 290, rejected: 2), Level(13, 291, rejected: 25), "was beyond it", null);
        Assert.Contains("12 gave 290 ok/s with no failures", clean.Reason, StringComparison.Ordinal);
        Assert.Contains("with 2 of 1,000 failed (the races of a level at its capacity)", raced.Reason, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(100, 51, 90, 6)]
    [InlineData(300, 10, 270, 4)]
    [InlineData(10, 5, 9, 1)]
    public void ForRate_RateLimit_ConcurrencyCarriesTheRateWithHeadroom(double sustained, double latencyMs, double expectedRate, int expectedLimit)
    {
        var recommendation = Recommender.ForRate(new RateVerdict(true, sustained, "a burst passed"), latencyMs, 60);
        Assert.Equal(RecommendationStatus.Final, recommendation.Status);
        Assert.Equal(expectedRate, recommendation.RatePerSecond);
        Assert.Equal(expectedLimit, recommendation.Limit);

        // Little's law: rate x latency must fit in the limit, or the advised concurrency cannot deliver the advised rate.
        Assert.True(recommendation.Limit >= expectedRate * latencyMs / 1000, $"{recommendation.Limit} < {expectedRate} x {latencyMs} ms");
        Assert.Contains("limits the rate", recommendation.Reason, StringComparison.Ordinal);
        Assert.Contains("1.25 headroom", recommendation.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void ForRate_FanOutSnippet_UsesFanOutOptionsRateLimiter()
    {
        var code = Recommender.ForRate(new RateVerdict(true, 300, "a burst passed"), 10, 20).Code!;
        Assert.Contains("RateLimiter = rate", code.FanOut, StringComparison.Ordinal);
        Assert.Contains("new FanOutOptions { Limit = ConcurrencyLimit.Fixed(4), RateLimiter = rate }", code.FanOut, StringComparison.Ordinal);
        Assert.DoesNotContain("AcquireAsync", code.FanOut, StringComparison.Ordinal);
        Assert.Contains("TokensPerPeriod = 27", code.FanOut, StringComparison.Ordinal);
        Assert.Contains("rate.AcquireAsync", code.ParallelForEachAsync, StringComparison.Ordinal);
        Assert.Contains("rate.AcquireAsync", code.SemaphoreSlim, StringComparison.Ordinal);
    }

    [Fact]
    public void AtLeast_NotSaturated_SaysAtLeastAndGivesNoCode()
    {
        var recommendation = Recommender.AtLeast(Level(4, 160), "--max-requests 150 was spent");
        Assert.Equal(RecommendationStatus.AtLeast, recommendation.Status);
        Assert.False(recommendation.IsFinal);
        Assert.Equal(4, recommendation.Limit);
        Assert.Null(recommendation.Code);
        Assert.StartsWith("at least 4 at once", recommendation.Reason, StringComparison.Ordinal);
        Assert.Contains("--max-requests 150 was spent", recommendation.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void None_EverythingFailed_HasNoLimitAndNoCode()
    {
        var recommendation = Recommender.None("every level failed");
        Assert.Equal(RecommendationStatus.None, recommendation.Status);
        Assert.Null(recommendation.Limit);
        Assert.Null(recommendation.Code);
        Assert.Equal("no recommendation: every level failed", recommendation.Reason);
    }

    [Fact]
    public void Unconfirmed_OpenLoopFailed_KeepsTheLimitDropsTheCode()
    {
        var found = Recommender.AtCapacity(Level(12, 290), Level(13, 291, rejected: 25), "was beyond it", null);
        var recommendation = Recommender.Unconfirmed(found, "the queue grew");
        Assert.Equal(RecommendationStatus.Unconfirmed, recommendation.Status);
        Assert.Equal(12, recommendation.Limit);
        Assert.Null(recommendation.Code);
        Assert.EndsWith("but not confirmed: the queue grew", recommendation.Reason, StringComparison.Ordinal);
    }
}
