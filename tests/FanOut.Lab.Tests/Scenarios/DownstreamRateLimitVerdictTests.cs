using FanOut.Lab.Results;
using FanOut.Lab.Scenarios;
using FanOut.Lab.Tests.Results;

namespace FanOut.Lab.Tests.Scenarios;

/// <summary>A "best" the verdict names is best within the group it speaks of (issue 18: sentences true of their table).</summary>
public sealed class DownstreamRateLimitVerdictTests
{
    [Fact]
    public void Verdict_BestBurstyRow_IsOneThatDroppedItems()
    {
        // Completed every item and has the highest rate: not one of the bursty strategies the sentence is about.
        var verdict = VerdictBesideTheBurstyRows(Row("FanOut (Fixed 50, 500/s bucket)", ok: 2_000, failed: 0, okPerSecond: 600));

        Assert.Contains("(best of those that dropped items: Parallel.ForEachAsync (DOP 50), 533 ok/s)", verdict, StringComparison.Ordinal);
        Assert.Contains("Of the strategies that completed every item, FanOut (Fixed 50, 500/s bucket) was fastest (600 ok/s).", verdict, StringComparison.Ordinal);
    }

    [Fact]
    public void Verdict_RowThatRanItsRefusedItemsAgain_CompletedEveryItem()
    {
        // FanOut's default with each 429 thrown runs a refused item again: its 429s are failed attempts, and every item
        // succeeded. Seen on the real clock at 505 ok/s beside the rate limiter's 487, while the verdict named the limiter.
        var verdict = VerdictBesideTheBurstyRows(
            Row("FanOut (Fixed 50, 500/s bucket)", ok: 2_000, failed: 0, okPerSecond: 487),
            Row("FanOut (default, 429 thrown)", ok: 2_000, failed: 69, okPerSecond: 505));

        Assert.Contains("Of the strategies that completed every item, FanOut (default, 429 thrown) was fastest (505 ok/s).", verdict, StringComparison.Ordinal);
        Assert.Contains("(best of those that dropped items: Parallel.ForEachAsync (DOP 50), 533 ok/s)", verdict, StringComparison.Ordinal);
    }

    [Fact]
    public void Verdict_ItemCountReadBackFromAChildProcess_IsReadAsANumber()
    {
        // A case run in a child process comes back through JSON: its parameters are JSON elements (the main job threw here).
        var fromJson = Row("FanOut (default, 429 thrown)", ok: 2_000, failed: 69, okPerSecond: 505) with
        {
            Parameters = new Dictionary<string, object> { ["itemCount"] = System.Text.Json.JsonDocument.Parse("2000").RootElement.Clone() },
        };
        var verdict = VerdictBesideTheBurstyRows(fromJson);

        Assert.Contains("Of the strategies that completed every item, FanOut (default, 429 thrown) was fastest (505 ok/s).", verdict, StringComparison.Ordinal);
    }

    /// <summary>The verdict on <paramref name="rows"/> beside the two strategies that drop most items against 500/s (their 429s are not run again).</summary>
    private static string VerdictBesideTheBurstyRows(params CaseResult[] rows) =>
        new DownstreamRateLimitScenario().Verdict(Result(
        [
            Row("Task.WhenAll", ok: 55, failed: 1_945, okPerSecond: 486),
            Row("Parallel.ForEachAsync (DOP 50)", ok: 45, failed: 1_955, okPerSecond: 533),
            .. rows,
        ]));

    private static ScenarioResult Result(params CaseResult[] cases) => ScenarioResults.Of("downstream-rate-limit", cases);

    private static CaseResult Row(string strategy, double ok, double failed, double okPerSecond) => new()
    {
        Strategy = strategy,
        Workload = "w",
        Parameters = new Dictionary<string, object> { ["itemCount"] = 2_000 },
        Runs = 3,
        MeanMs = 100,
        PeakInFlight = 50,
        Io = new IoResult
        {
            Successes = ok,
            Failures = failed,
            FailuresHttp = failed,
            FailuresByStatus = new Dictionary<string, double> { ["429"] = failed },
            SuccessesPerSecond = okPerSecond,
            Rejected429 = failed,
            PeakConcurrentServed = 30,
        },
    };
}
