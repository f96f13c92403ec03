using FanOut.Lab.Results;
using FanOut.Lab.Scenarios;
using FanOut.Lab.Tests.Results;

namespace FanOut.Lab.Tests.Scenarios;

/// <summary>The verdict reads the per-load table: FanOut's rows against the hand-tuned limiter and the uncontended p99.</summary>
public sealed class ServerOverloadScenarioTests
{
    private const string Backend = "PostgreSQL (loopback), Npgsql pool of 4";

    [Fact]
    public void Verdict_LoadSteps_ComparesWithTheHandTunedRowAndTheUncontendedP99()
    {
        var rows = ServerOverloadScenario.Rows;
        var measured = Result(
            Row(rows[0].Name, Step(0.5, 50, p99: 50), Step(1, 0, p99: 400), Step(2, 0, p99: null), Step(4, 0, p99: null)),
            Row(rows[1].Name, Step(0.5, 50, p99: 48), Step(1, 95, p99: 100), Step(2, 100, p99: 120), Step(4, 80, p99: 130)),
            Row(rows[2].Name, Step(0.5, 50, p99: 60), Step(1, 95, p99: 100), Step(2, 100, p99: 120), Step(4, 80, p99: 130)),
            Row(rows[3].Name, Step(0.5, 50, p99: 60), Step(1, 95, p99: 80), Step(2, 90, p99: 75), Step(4, 96, p99: 150)),
            Row(rows[4].Name, Step(0.5, 50, p99: 55, refused: 0.01), Step(1, 95, p99: 80), Step(2, 99, p99: 90), Step(4, 72, p99: 100, critical: 0.995, sheddable: 0.05)));

        var verdict = new ServerOverloadScenario().Verdict(measured);

        Assert.StartsWith($"On {Backend}: uncontended p99 50 ms", verdict, StringComparison.Ordinal);
        Assert.Contains("hand-tuned ConcurrencyLimiter(4) 100/80", verdict, StringComparison.Ordinal);
        Assert.Contains("FanOut adaptive: 2x 90/s (0.90x hand-tuned), p99 75 ms = 1.5x uncontended; 4x 96/s (1.20x hand-tuned), p99 150 ms = 3.0x uncontended.", verdict, StringComparison.Ordinal);
        Assert.Contains("4x 72/s (0.90x hand-tuned), p99 100 ms = 2.0x uncontended", verdict, StringComparison.Ordinal);
        Assert.Contains("critical ok at 4x 99.5 % while 95 % of sheddable were refused or failed", verdict, StringComparison.Ordinal);
        Assert.Contains("Refused at 0.5x, any row: 1.0 %.", verdict, StringComparison.Ordinal);
    }

    [Fact]
    public void Verdict_FanOutRowFailed_SaysSoInsteadOfComparing()
    {
        var rows = ServerOverloadScenario.Rows;
        var measured = Result(Row(rows[0].Name, Step(0.5, 50, p99: 50)), Row(rows[1].Name, Step(0.5, 50, p99: 50)));

        Assert.Equal("Not enough cases finished to compare.", new ServerOverloadScenario().Verdict(measured));
    }

    [Fact]
    public void Cases_FiveRowsEachSweepingTheFourLoads()
    {
        var cases = new ServerOverloadScenario().Cases(ScenarioSize.Default);

        Assert.Equal(ServerOverloadScenario.Rows.Select(r => r.Name), cases.Select(c => c.Strategy.Name));
        Assert.All(cases, c => Assert.Equal([0.5, 1, 2, 4], ((FanOut.Lab.ServerOverload.ServerOverloadWorkload)c.CreateWorkload()).Loads));
        Assert.All(cases, c => Assert.Equal(1, c.Policy!.MaxRuns));
    }

    private static LoadStepResult Step(double load, double goodput, double? p99, double refused = 0, double critical = 1, double sheddable = 1) =>
        new(load, load * 100, (int)(load * 150), goodput, p99 / 2, p99, refused, 0, critical, sheddable, null);

    private static CaseResult Row(string strategy, params LoadStepResult[] steps) => new()
    {
        Strategy = strategy,
        Workload = $"GET /work, a backend of 4 at once x 40 ms, open loop at 0.5x, 1x, 2x, 4x: {Backend}",
        Parameters = new Dictionary<string, object>(),
        Runs = 1,
        Io = new IoResult { LoadSteps = steps },
    };

    private static ScenarioResult Result(params CaseResult[] cases) => ScenarioResults.Of("server-overload", cases) with { Seed = "issue 28" };
}
