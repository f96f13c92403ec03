using FanOut.Lab.Probing;

using static FanOut.Lab.Tests.Probing.LevelResults;

namespace FanOut.Lab.Tests.Probing;

public sealed class RecommenderTests
{
    private static LevelVerdict Clean => new(true, false, null);

    private static LevelVerdict Overloaded => new(false, true, "overloaded");

    [Fact]
    public void Recommend_FlatAfterKnee_PicksTheSmallestLevelNearTheBest()
    {
        LevelResult[] levels = [Level(1, 45), Level(8, 350), Level(16, 700), Level(24, 1_040), Level(32, 1_050, p99Ms: 27), Level(64, 1_045, p99Ms: 55)];
        var recommendation = Recommender.Recommend(levels, [Clean, Clean, Clean, Clean, Clean, Clean], RateVerdict.None, null);
        Assert.Equal(24, recommendation.Limit);
        Assert.Null(recommendation.RatePerSecond);
        Assert.Equal(1_040, recommendation.OkPerSecond);
        Assert.Contains("ConcurrencyLimit.Fixed(24)", recommendation.Code.FanOut, StringComparison.Ordinal);
        Assert.Contains("MaxDegreeOfParallelism = 24", recommendation.Code.ParallelForEachAsync, StringComparison.Ordinal);
        Assert.Contains("new SemaphoreSlim(24)", recommendation.Code.SemaphoreSlim, StringComparison.Ordinal);
        Assert.DoesNotContain('\n', recommendation.Reason);
    }

    [Fact]
    public void Recommend_RejectedLevelHasMoreThroughput_NeverPicksIt()
    {
        LevelResult[] levels = [Level(1, 33), Level(4, 130), Level(8, 262), Level(16, 270, rejected: 500)];
        var recommendation = Recommender.Recommend(levels, [Clean, Clean, Clean, Overloaded], RateVerdict.None, null);
        Assert.Equal(8, recommendation.Limit);
        Assert.Contains("16 was rejected", recommendation.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Recommend_RateLimit_GivesARateWithHeadroomAndATokenBucket()
    {
        LevelResult[] levels = [Level(1, 95), Level(2, 190), Level(4, 300, rejected: 800)];
        var rate = new RateVerdict(true, 300, "a burst passed");
        var recommendation = Recommender.Recommend(levels, [Clean, Clean, Overloaded], rate, null);
        Assert.Equal(2, recommendation.Limit);
        Assert.Equal(270, recommendation.RatePerSecond);
        Assert.Contains("limits the rate", recommendation.Reason, StringComparison.Ordinal);
        Assert.Contains("TokenBucketRateLimiter", recommendation.Code.FanOut, StringComparison.Ordinal);
        Assert.Contains("TokensPerPeriod = 27", recommendation.Code.FanOut, StringComparison.Ordinal);
    }

    [Fact]
    public void Recommend_NothingClean_RecommendsOneAndSaysWhy()
    {
        var recommendation = Recommender.Recommend([Level(1, 10, rejected: 500)], [Overloaded], RateVerdict.None, null);
        Assert.Equal(1, recommendation.Limit);
        Assert.Contains("no level was clean", recommendation.Reason, StringComparison.Ordinal);
    }
}
