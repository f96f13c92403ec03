using FanOut.Lab.Reports.Recommendations;
using FanOut.Lab.Results;
using FanOut.Lab.Tests.Results;

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
            Case("FanOut (Fixed 50)", 100, concurrency: 50),
            Case("Parallel.ForEachAsync (DOP 50)", 500, concurrency: 50)))!;

        Assert.Equal("FanOut (Fixed 50)", recommendation.Best.Strategy);
        Assert.Equal("50 (50 in flight)", recommendation.Limit);
        Assert.StartsWith("Contradicts", recommendation.SeedCheck, StringComparison.Ordinal);
        Assert.Contains("5.0x the fastest of the cases that completed every item", recommendation.SeedCheck, StringComparison.Ordinal);
    }

    [Fact]
    public void For_AnUnboundedRowFastest_AdvisesTheFastestBoundedAndQuotesTheUnbounded()
    {
        // One voice with analyzer FO0003: a row with no bound is quoted, never advised, in every shape.
        var recommendation = RecommendationBuilder.For(s_shape, Scenario(
            Case("Task.WhenAll", 100, concurrency: 2000),
            Case("Parallel.ForEachAsync (DOP 50)", 500, concurrency: 50)))!;

        Assert.Equal("Parallel.ForEachAsync (DOP 50)", recommendation.Best.Strategy);
        Assert.Equal("Task.WhenAll", Assert.Single(recommendation.Excluded).Strategy);
        Assert.Contains("faster with no bound: Task.WhenAll 100.00 ms with 2,000 in flight", recommendation.Evidence, StringComparison.Ordinal);
        Assert.Equal("Agrees with seed 000: a DOP: Parallel.ForEachAsync (DOP 50) is the fastest of the bounded cases that completed every item here.", recommendation.SeedCheck);
    }

    [Fact]
    public void For_OnlyUnboundedRowsCompleted_AdvisesTheFastestAndSaysItHasNoLimit()
    {
        var recommendation = RecommendationBuilder.For(s_shape, Scenario(Case("Task.WhenAll", 100, concurrency: 2000)))!;

        Assert.Equal("Task.WhenAll", recommendation.Best.Strategy);
        Assert.Equal("no limit (2,000 in flight)", recommendation.Limit);
    }

    [Fact]
    public void For_NoKnownLimitAndAllAtOnceFastest_AdvisesFanOutsDefaultAndQuotesTheUnboundedRow()
    {
        // Issue 26: "Use Task.WhenAll: none needed, all 500 at once; prefer Task.WhenAll for I/O" is what FO0003 flags.
        var waits = new WorkloadShape("Waits", "capacity", "seed 001: Task.WhenAll for I/O", "Task.WhenAll", NoKnownLimit: true);
        var recommendation = RecommendationBuilder.For(waits, Scenario(
            Case("Task.WhenAll", 20.7, concurrency: 2000),
            Case("Parallel.ForEachAsync (DOP 50)", 226, concurrency: 50),
            Case("FanOut (adaptive)", 83.1, concurrency: 256, limitFinal: 256)))!;

        Assert.Equal("FanOut (adaptive)", recommendation.Best.Strategy);
        Assert.Equal("Parallel.ForEachAsync (DOP 50)", recommendation.RunnerUp!.Strategy);
        Assert.StartsWith("none to choose: FanOut's default starts at 10, grows while latency holds", recommendation.Limit, StringComparison.Ordinal);
        Assert.EndsWith("here it settled at 256 (peak 256)", recommendation.Limit, StringComparison.Ordinal);
        Assert.Equal("Task.WhenAll", Assert.Single(recommendation.Excluded).Strategy);
        Assert.Contains("the fastest row with at most 256 in flight", recommendation.Evidence, StringComparison.Ordinal);
        Assert.Contains("faster with no bound: Task.WhenAll 20.70 ms with 2,000 in flight", recommendation.Evidence, StringComparison.Ordinal);
        Assert.StartsWith("Measured, not advised (seed 001: Task.WhenAll for I/O): Task.WhenAll took 20.70 ms with 2,000 in flight", recommendation.SeedCheck, StringComparison.Ordinal);
        foreach (var text in new[] { recommendation.Limit, recommendation.Evidence, recommendation.SeedCheck })
        {
            Assert.DoesNotContain("at once", text, StringComparison.Ordinal);
            Assert.DoesNotContain("prefer Task.WhenAll", text, StringComparison.Ordinal);
        }
    }

    [Fact]
    public void For_NoKnownLimitAndAFixedLimitFaster_StillAdvisesTheDefaultAndSaysHowFarBehind()
    {
        var waits = new WorkloadShape("Waits", "capacity", "seed 001: Task.WhenAll for I/O", "Task.WhenAll", NoKnownLimit: true);
        var recommendation = RecommendationBuilder.For(waits, Scenario(
            Case("FanOut (Fixed 50)", 100, concurrency: 50),
            Case("FanOut (adaptive)", 120, concurrency: 256, limitFinal: 128)))!;

        Assert.Equal("FanOut (adaptive)", recommendation.Best.Strategy);
        Assert.Contains("1.2x the fastest row with at most 256 in flight (FanOut (Fixed 50) 100.00 ms)", recommendation.Evidence, StringComparison.Ordinal);
        Assert.Null(recommendation.RunnerUp);
    }

    [Fact]
    public void For_EveryCaseFailedItems_GivesNothing() =>
        Assert.Null(RecommendationBuilder.For(s_shape, Scenario(Case("Task.WhenAll", 100, concurrency: 2000, failed429: 5))));

    private static ScenarioResult Scenario(params CaseResult[] cases) => ScenarioResults.Of("capacity", cases);

    private static CaseResult Case(string strategy, double meanMs, int concurrency, double failed429 = 0, int? limitFinal = null) => new()
    {
        LimitFinal = limitFinal,
        LimitPeak = limitFinal,
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
