using FanOut.Lab.Outcomes;
using FanOut.Lab.Results;
using FanOut.Lab.Results.Columns;
using FanOut.Lab.Running;
using FanOut.Lab.Scenarios;
using FanOut.Lab.Strategies;
using FanOut.Lab.Tests.Results;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Tests.Scenarios;

public sealed class Seed000OutcomeScenarioTests
{
    private static readonly RunPolicy s_quick = new(1, 2, 2, TimeSpan.Zero);

    [Fact]
    public void Run_TinyFailingCase_CarriesTheOutcomeIntoTheCaseResult()
    {
        var labCase = new LabCase(new ObservedStrategy(new WhenAllStrategy()), () => new FailingWorkload(4, 1, [1]), 4);

        var result = new InProcessCaseRunner(s_quick).Run(labCase);

        Assert.True(result.Succeeded, result.Error);
        Assert.Equal(2, result.Runs);
        Assert.Equal(3, result.Outcome!.Completed);
        Assert.Equal(1, result.Outcome.Failed);
        Assert.Equal("Faulted", result.Outcome.FinalState);
        Assert.Equal("ItemFailedException (item 1)", result.Outcome.Threw);
        Assert.Equal(ResultColumns.For(Scenario(result), ColumnTables.Outcome).Select(c => c.Header), ResultTable.For(Scenario(result)).Headers);
        Assert.NotNull(result.Heartbeat);
    }

    [Fact]
    public void Run_TinyCanceledCaseIgnoringTheToken_ShowsWaitAsyncLeavingWorkRunning()
    {
        var labCase = new LabCase(new ObservedStrategy(new WhenAllWaitAsyncStrategy(), CancelPlan.AtItemStart(3)), () => new FailingWorkload(4, 200, [], honorsToken: false), 4);

        var result = new InProcessCaseRunner(new RunPolicy(0, 1, 1, TimeSpan.Zero)).Run(labCase);

        Assert.True(result.Succeeded, result.Error);
        Assert.Equal("Canceled", result.Outcome!.FinalState);
        Assert.Equal(4, result.Outcome.ItemsStarted);
    }

    [Fact]
    public void Verdict_CancelScenario_NamesTheStrategyThatLeftWorkRunning()
    {
        var scenario = new Seed000CancelScenario();
        var cases = scenario.Cases(ScenarioSize.Default).Select((c, i) =>
        {
            var workload = c.CreateWorkload();
            var leftRunning = c.Strategy is ObservedStrategy && c.Strategy.Name.Contains("WaitAsync", StringComparison.Ordinal);
            return new CaseResult
            {
                Strategy = c.Strategy.Name,
                Workload = workload.Name,
                Parameters = CaseParameters.Of(c, workload),
                Runs = 1,
                Outcome = new OutcomeResult { FinalState = "Canceled", Threw = "TaskCanceledException", StopMs = i, RunningAtReturn = leftRunning ? 100 : 0, Completed = 7 },
            };
        }).ToArray();

        var verdict = scenario.Verdict(Scenario(cases));

        Assert.Contains("Task.WhenAll + WaitAsync(token) 100 items", verdict);
        Assert.Contains("Task.WhenAll (tasks ignore the token) stopped 4.00 ms after the cancel", verdict);
    }

    [Fact]
    public void Verdict_ErrorsScenarioMissingCases_SaysSo()
    {
        Assert.StartsWith("Not enough cases", new Seed000ErrorsScenario().Verdict(Scenario()));
    }

    private static ScenarioResult Scenario(params CaseResult[] cases) => ScenarioResults.Of("t", cases);
}
