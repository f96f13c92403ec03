using FanOut.Lab.Results;
using FanOut.Lab.Running;
using FanOut.Lab.Scenarios;
using FanOut.Lab.Tests.Results;

namespace FanOut.Lab.Tests.Scenarios;

/// <summary>The verdicts of seed 000's blocking Parallel.ForEach and seed 004's Task.Run projection state the measured heartbeat.</summary>
public sealed class StarvationVerdictTests
{
    [Fact]
    public void Verdict_Seed000BlockingForEach_StatesHowLongARequestWaited()
    {
        var verdict = new Seed000FanOut500Scenario().Verdict(Measured(new Seed000FanOut500Scenario(), c => c.Strategy.Name.StartsWith("Parallel.ForEach (", StringComparison.Ordinal) ? 9_000 : 0.5));

        Assert.Contains("A request arriving during it waited 9,000 ms for a pool thread at the median", verdict, StringComparison.Ordinal);
        Assert.Contains("(during WhenAll: 0.50 ms at p99)", verdict, StringComparison.Ordinal);
    }

    [Fact]
    public void Verdict_Seed004TaskRun_StatesHowLongARequestWaited()
    {
        var verdict = new Seed004MixedScenario().Verdict(Measured(new Seed004MixedScenario(), c => c.Strategy.Name == "Task.Run + WhenAll" ? 700 : 9));

        Assert.Contains("a request arriving during the Task.Run projection waited 700 ms for a pool thread at the median", verdict, StringComparison.Ordinal);
        Assert.Contains("during ForEachAsync (DOP", verdict, StringComparison.Ordinal);
    }

    /// <summary>Every case of <paramref name="scenario"/> as if measured, with a heartbeat of <paramref name="lateMs"/> at every percentile.</summary>
    private static ScenarioResult Measured(Scenario scenario, Func<LabCase, double> lateMs) => ScenarioResults.Of(
        scenario.Id,
        scenario.Cases(ScenarioSize.Default).Select(c =>
        {
            var workload = c.CreateWorkload();
            var late = lateMs(c);
            return new CaseResult
            {
                Strategy = c.Strategy.Name,
                Workload = workload.Name,
                Parameters = CaseParameters.Of(c, workload),
                Runs = 3,
                MeanMs = 100,
                Efficiency = 0.5,
                PeakInFlight = 1,
                Heartbeat = new HeartbeatResult { PoolP50Ms = late, PoolP99Ms = late, PoolMaxMs = late },
            };
        }).ToArray());
}
