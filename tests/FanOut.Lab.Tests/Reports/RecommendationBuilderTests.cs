using FanOut.Lab.Reports.Recommendations;
using FanOut.Lab.Results;

namespace FanOut.Lab.Tests.Reports;

public sealed class RecommendationBuilderTests
{
    private static readonly WorkloadShape s_shape = new("A downstream with a capacity", "capacity", "seed 000: a DOP", "Parallel.ForEachAsync (DOP");

    [Fact]
    public void For_FastestCaseFailedItems_RecommendsTheFastestThatCompletedAndQuotesTheExcluded()
    {
        var recommendation = RecommendationBuilder.For(s_shape, Scenario(
            Case("Task.WhenAll", 190, concurrency: 2000, failed429: 1730),
            Case("Parallel.ForEachAsync (DOP 50)", 1175, concurrency: 50),
            Case("FanOut (Fixed 50)", 1170, concurrency: 50),
            Case("Parallel.ForEachAsync (default)", 27_900, concurrency: 2)))!;

        Assert.Equal("FanOut (Fixed 50)", recommendation.Best.Strategy);
        Assert.Equal("Parallel.ForEachAsync (DOP 50)", recommendation.RunnerUp!.Strategy);
        Assert.StartsWith("50 ", recommendation.Limit, StringComparison.Ordinal);
        Assert.Equal("Task.WhenAll", Assert.Single(recommendation.Excluded).Strategy);
        Assert.Contains("1,730 x 429", recommendation.Evidence, StringComparison.Ordinal);
        Assert.StartsWith("Agrees", recommendation.SeedCheck, StringComparison.Ordinal);
    }

    [Fact]
    public void For_AdvisedStrategyMuchSlower_SaysTheSeedIsContradicted()
    {
        var recommendation = RecommendationBuilder.For(s_shape, Scenario(
            Case("Task.WhenAll", 100, concurrency: 2000),
            Case("Parallel.ForEachAsync (DOP 50)", 500, concurrency: 50)))!;

        Assert.Equal("Task.WhenAll", recommendation.Best.Strategy);
        Assert.StartsWith("none needed", recommendation.Limit, StringComparison.Ordinal);
        Assert.StartsWith("Contradicts", recommendation.SeedCheck, StringComparison.Ordinal);
        Assert.Contains("5.0x", recommendation.SeedCheck, StringComparison.Ordinal);
    }

    [Fact]
    public void For_EveryCaseFailedItems_GivesNothing() =>
        Assert.Null(RecommendationBuilder.For(s_shape, Scenario(Case("Task.WhenAll", 100, concurrency: 2000, failed429: 5))));

    private static ScenarioResult Scenario(params CaseResult[] cases) =>
        new() { Id = "capacity", Seed = "s", SeedClaim = "c", SeedMachine = "m", Scale = 1, Full = false, Cases = cases };

    private static CaseResult Case(string strategy, double meanMs, int concurrency, double failed429 = 0) => new()
    {
        Strategy = strategy,
        Workload = "GET",
        Parameters = new Dictionary<string, object> { ["itemCount"] = 2000 },
        Runs = 3,
        MeanMs = meanMs,
        Concurrency = concurrency,
        PeakInFlight = Math.Min(concurrency, 2000),
        Io = new IoResult
        {
            Successes = 2000 - failed429,
            Failures = failed429,
            FailuresHttp = failed429,
            FailuresByStatus = failed429 > 0 ? new Dictionary<string, double> { ["429"] = failed429 } : new Dictionary<string, double>(),
            SuccessesPerSecond = (2000 - failed429) * 1000 / meanMs,
        },
    };
}
