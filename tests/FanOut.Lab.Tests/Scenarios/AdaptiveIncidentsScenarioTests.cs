using System.Globalization;

using FanOut.Lab.Results;
using FanOut.Lab.Results.Columns;
using FanOut.Lab.Running;
using FanOut.Lab.Scenarios;
using FanOut.Lab.Strategies;
using FanOut.Lab.Tests.Results;

namespace FanOut.Lab.Tests.Scenarios;

/// <summary>adaptive-incidents: its rows and timeline from a real run of one phase, and a verdict whose every figure is the table's.</summary>
public sealed class AdaptiveIncidentsScenarioTests
{
    /// <remarks>At full scale (1.5 s a case, ~5 s in all): a shorter script leaves a cold client on a loaded machine no time to
    /// reach the phase (at quarter scale the default's first four calls took 421 ms of a 375 ms script). Speeds are not asserted:
    /// beside the rest of the suite a starved pool left the default 32 calls in 2.3 s.</remarks>
    [Fact]
    public async Task AdaptiveIncidents_HalvedPhase_ProducesItsRowsTimelineAndAVerdictInTheTablesFigures()
    {
        var scenario = new OnePhase(new AdaptiveIncidentsScenario(), "halved");
        using var limit = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        var runner = new LabRunner(new InProcessScenarioCaseRunner(new RunPolicy(0, 1, 1, TimeSpan.Zero)), null, new SilentProgress());
        var result = Assert.Single((await runner.RunAsync([scenario], ScenarioSize.Default, limit.Token)).Scenarios);

        Assert.Equal([FanOutRunAllStrategy.DefaultName, FanOutRunAllStrategy.FixedName(16), FanOutRunAllStrategy.FixedName(32)], result.Cases.Select(c => c.Strategy));
        Assert.All(result.Cases, c => Assert.True(c.Succeeded, c.Error));
        Assert.All(result.Cases, c => Assert.True(IncidentFigures.IsIncident(c), $"{c.Strategy} has no incident figures"));

        // What holds however loaded the machine (a starved pool may leave a row few calls in the phase): the default's limit
        // moves and its timeline holds it; "limit N at the end" is the Strategy column's final limit; a fixed limit is in the
        // band from the start (16) or never (32); and a fixed limit fails exactly the items the server turned away.
        var adaptive = result.Cases[0];
        Assert.NotNull(adaptive.Timeline?.Limit);
        Assert.Contains(adaptive.Timeline!.Limit!, l => l > 0);
        Assert.Equal(adaptive.LimitFinal, adaptive.Io!.LimitAtEnd);
        Assert.Equal(0, result.Cases[1].Io!.ConvergenceMs);
        Assert.Null(result.Cases[2].Io!.ConvergenceMs);
        Assert.All(result.Cases.Skip(1), c => Assert.Equal(c.Io!.Rejected429, c.Io.ItemsFailed));
        if (result.Cases[1].Io!.PhaseSuccessesPerSecond > 0)
        {
            Assert.Equal("1.00x", IncidentFigures.RatioText(IncidentFigures.GoodputRatio(result.Cases[1], result)!.Value));
        }

        // Every figure the verdict gives for the phase is the one its table shows.
        var columns = ResultColumns.All.Where(c => c.Id.StartsWith("incident-", StringComparison.Ordinal)).ToDictionary(c => c.Id);
        string Cell(string id, CaseResult c) => columns[id].Cell(c, result);
        Assert.Contains(Cell("incident-goodput", adaptive).Split(' ')[0] + " ok/s in the phase", result.Verdict, StringComparison.Ordinal);
        Assert.Contains($"{Cell("incident-items-failed", adaptive)} items failed", result.Verdict, StringComparison.Ordinal);
        var mistunedGoodput = Cell("incident-goodput", result.Cases[2]).Split('(', ')');
        Assert.Contains(
            $"{FanOutRunAllStrategy.FixedName(32)}, tuned for another phase: {(mistunedGoodput.Length > 1 ? mistunedGoodput[1] : "-")} with {Cell("incident-items-failed", result.Cases[2])} items failed",
            result.Verdict,
            StringComparison.Ordinal);
        Assert.Contains(
            adaptive.Io!.ConvergenceMs is null
                ? $"never stayed within 12-20 (capacity 16; limit {adaptive.LimitFinal:N0} at the end)"
                : $"after {Cell("incident-settle", adaptive)}, {Cell("incident-429-after-settle", adaptive)} 429 after settling",
            result.Verdict,
            StringComparison.Ordinal);
    }

    [Fact]
    public void Verdict_FiguresGiven_StatesThemAndJudgesEachTargetByThem()
    {
        var measured = Result(
            Row(FanOutRunAllStrategy.DefaultName, "halved", 16, adaptive: true, okPerSecond: 700, settleMs: 120, rejectedAfter: 2, answeredAfter: 100, itemsFailed: 0),
            Row(FanOutRunAllStrategy.FixedName(16), "halved", 16, adaptive: false, okPerSecond: 800, settleMs: 0, rejectedAfter: 0, answeredAfter: 800, itemsFailed: 0),
            Row(FanOutRunAllStrategy.FixedName(32), "halved", 16, adaptive: false, okPerSecond: 776, settleMs: null, rejectedAfter: null, answeredAfter: null, itemsFailed: 9_000),
            Row(FanOutRunAllStrategy.DefaultName, "storm", 32, adaptive: true, okPerSecond: 300, settleMs: null, rejectedAfter: null, answeredAfter: null, itemsFailed: 1, limitAtChange: 32, limitAtEnd: 10, pauseRejected: 33),
            Row(FanOutRunAllStrategy.FixedName(32), "storm", 32, adaptive: false, okPerSecond: 600, settleMs: 0, rejectedAfter: 0, answeredAfter: 500, itemsFailed: 20_000));

        var verdict = new AdaptiveIncidentsScenario().Verdict(measured);

        Assert.StartsWith("Issue 29's incident targets, scaled to this run: met in 1 of 2 phases (missed: storm).", verdict, StringComparison.Ordinal);
        Assert.Contains("halved: FanOut (default) settled within 12-20 (capacity 16) after 120 ms, 2.0% 429 after settling; 700 ok/s in the phase, 0.88x FanOut (Fixed 16)'s, 0 items failed; FanOut (Fixed 32), tuned for another phase: 0.97x with 9,000 items failed. Target (settled within 1,000 ms, at most 3% 429 after): met.", verdict, StringComparison.Ordinal);
        Assert.Contains("storm: FanOut (default) never stayed within 24-40 (capacity 32; limit 10 at the end); 300 ok/s in the phase, 0.50x FanOut (Fixed 32)'s, 1 items failed", verdict, StringComparison.Ordinal);
        Assert.Contains("Target (no item failed, and the calls sent into the storm (33) about the limit at its start (32) or fewer): missed.", verdict, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(0.031, "missed")]
    [InlineData(0.03, "met")]
    public void Verdict_HalvedRejectionsAfterSettling_JudgedAgainstThreePercent(double share, string judged)
    {
        var measured = Result(
            Row(FanOutRunAllStrategy.DefaultName, "halved", 16, adaptive: true, okPerSecond: 700, settleMs: 120, rejectedAfter: share * 1000, answeredAfter: 1000, itemsFailed: 0),
            Row(FanOutRunAllStrategy.FixedName(16), "halved", 16, adaptive: false, okPerSecond: 800, settleMs: 0, rejectedAfter: 0, answeredAfter: 800, itemsFailed: 0));

        Assert.Contains($"at most 3% 429 after): {judged}.", new AdaptiveIncidentsScenario().Verdict(measured), StringComparison.Ordinal);
    }

    private static ScenarioResult Result(params CaseResult[] cases) => ScenarioResults.Of("adaptive-incidents", cases);

    private static CaseResult Row(
        string strategy, string phase, int bestFixed, bool adaptive, double okPerSecond, double? settleMs, double? rejectedAfter, double? answeredAfter, double itemsFailed,
        double limitAtChange = 32, double limitAtEnd = 16, double pauseRejected = 0) => new()
        {
            Strategy = strategy,
            Workload = "w",
            Parameters = new Dictionary<string, object> { [IncidentFigures.PhaseKey] = phase, [IncidentFigures.BestFixedKey] = bestFixed.ToString(CultureInfo.InvariantCulture) },
            Runs = 1,
            Concurrency = adaptive ? 256 : int.Parse(strategy.Split(' ', ')')[2], CultureInfo.InvariantCulture),
            LimitFinal = adaptive ? limitAtEnd : null,
            Io = new IoResult
            {
                PhaseSuccessesPerSecond = okPerSecond,
                ConvergenceMs = settleMs,
                Rejected429AfterConvergence = rejectedAfter,
                CallsAfterConvergence = answeredAfter,
                ItemsFailed = itemsFailed,
                LimitAtChange = limitAtChange,
                LimitAtEnd = limitAtEnd,
                PauseRejected = pauseRejected,
            },
        };

    /// <summary>One phase of the scenario: its three cases, its verdict.</summary>
    private sealed class OnePhase(AdaptiveIncidentsScenario inner, string phase) : Scenario
    {
        public override string Id => inner.Id;

        public override SeedReference Seed => inner.Seed;

        public override string Describe(ScenarioSize size) => inner.Describe(size);

        public override IReadOnlyList<LabCase> Cases(ScenarioSize size) =>
            inner.Cases(size).Where(c => c.CreateWorkload().Parameters[IncidentFigures.PhaseKey].ToString() == phase).ToList();

        public override string Verdict(ScenarioResult measured) => inner.Verdict(measured);
    }
}
