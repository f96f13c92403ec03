using FanOut.Lab.Reports.Html;
using FanOut.Lab.Running;
using FanOut.Lab.Scenarios;
using FanOut.Lab.ServerOverload;

namespace FanOut.Lab.Tests.ServerOverload;

/// <summary>One row's sweep end to end on the simulated dependency (a second or two): every step recorded, the limit over time, the by-load table.</summary>
public sealed class ServerOverloadSweepTests
{
    [Fact]
    public void Run_PrioritiesRowOnTheSimulatedDependency_RecordsEveryStepAndTheLimitOverTime()
    {
        var workload = new ServerOverloadWorkload([0.5, 2], TimeSpan.FromSeconds(0.2), TimeSpan.FromSeconds(0.4), TimeSpan.FromMilliseconds(200), usePostgres: false);
        var labCase = new LabCase(new ServerOverloadStrategy(OverloadRow.FanOutPriorities), () => workload, workload.Requests);

        var result = new InProcessCaseRunner(new RunPolicy(0, 1, 1, TimeSpan.Zero)).Run(labCase);

        Assert.True(result.Succeeded, result.Error);
        Assert.Contains("simulated dependency", result.Workload, StringComparison.Ordinal);
        var steps = result.Io!.LoadSteps!;
        Assert.Equal([0.5, 2], steps.Select(s => s.LoadFactor));
        Assert.All(steps, s => Assert.InRange(s.Sent, (s.OfferedPerSecond * 0.4) - 1, (s.OfferedPerSecond * 0.4) + 1));
        Assert.All(steps, s => Assert.NotNull(s.MeanLimit));
        Assert.NotNull(result.Timeline!.Limit);
        Assert.Contains(result.Timeline.Limit!, l => l > 0);
        Assert.NotNull(result.Timeline.Completed);
        Assert.NotNull(result.Timeline.ServerInFlight);
        Assert.NotNull(result.LimitFinal);

        var html = new System.Text.StringBuilder();
        LoadStepTable.Append(html, [result]);
        Assert.Contains("<h3>By load</h3>", html.ToString(), StringComparison.Ordinal);
        Assert.Contains("<td class=\"num\">2x</td>", html.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public void LoadStepTable_NoCaseWithSteps_WritesNothing()
    {
        var html = new System.Text.StringBuilder();
        LoadStepTable.Append(html, [new FanOut.Lab.Results.CaseResult { Strategy = "s", Workload = "w", Parameters = new Dictionary<string, object>(), Runs = 1 }]);
        Assert.Equal(0, html.Length);
    }

    [Fact]
    public void Workload_NoLoadStep_Throws()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new ServerOverloadWorkload([], TimeSpan.Zero, TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(1)));
        Assert.Throws<ArgumentOutOfRangeException>(() => new ServerOverloadWorkload([1, -2], TimeSpan.Zero, TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(1)));
    }
}
