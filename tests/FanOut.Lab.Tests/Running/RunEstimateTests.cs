using FanOut.Lab.Results;
using FanOut.Lab.Running;
using FanOut.Lab.Scenarios;
using FanOut.Lab.Strategies;
using FanOut.Lab.Tests.Scenarios;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Tests.Running;

public sealed class RunEstimateTests
{
    private static readonly RunEstimate s_estimate = new(RunPolicy.Default, TimeSpan.FromSeconds(1));

    [Fact]
    public void For_WaitingCases_IsOverheadPlusTheirRunsUnderThePolicy()
    {
        var estimates = s_estimate.For(new TinyScenario(), ScenarioSize.Default);

        // WhenAll: 1 warm-up + 15 runs of the 1 ms ideal (within the budget); sequential: the same of 4 ms.
        Assert.Equal(TimeSpan.FromMilliseconds(1_016), estimates[0]);
        Assert.Equal(TimeSpan.FromMilliseconds(1_064), estimates[1]);
    }

    [Fact]
    public void For_LongAndDeclaredLongCases_CountOneRun()
    {
        var scenario = new OneCaseScenario(
            new LabCase(new SequentialAwaitStrategy(), () => new DelayWorkload(DelaySchedule.Fixed(500, 4)), 4),
            new LabCase(new WhenAllStrategy(), () => new DelayWorkload(DelaySchedule.Fixed(1, 4)), 4, Policy: RunPolicy.Once("slow in ways the model cannot see")));

        var estimates = s_estimate.For(scenario, ScenarioSize.Default);

        Assert.Equal(TimeSpan.FromSeconds(3), estimates[0]);
        Assert.Equal(TimeSpan.FromSeconds(1) + RunEstimate.UnknownLongRun, estimates[1]);
    }

    [Fact]
    public async Task RunAsync_WithEstimate_ReportsTheTotalThenTimeLeftGoingDown()
    {
        var progress = new RecordingProgress();
        await new LabRunner(new InProcessScenarioCaseRunner(new RunPolicy(0, 1, 1, TimeSpan.Zero)), null, progress) { Estimate = s_estimate }
            .RunAsync([new TinyScenario()], ScenarioSize.Default, CancellationToken.None);

        Assert.Equal(TimeSpan.FromMilliseconds(2_080), progress.Estimate);
        Assert.Equal([2_080, 1_064, 1_064, 0], progress.Left.Select(l => l.TotalMilliseconds));
    }

    private sealed class OneCaseScenario(params LabCase[] cases) : Scenario
    {
        public override string Id => "one";

        public override SeedReference Seed { get; } = new("one.txt", "nothing", "none");

        public override string Describe(ScenarioSize size) => "one";

        public override IReadOnlyList<LabCase> Cases(ScenarioSize size) => cases;

        public override string Verdict(ScenarioResult measured) => "done";
    }

    private sealed class RecordingProgress : ILabProgress
    {
        public TimeSpan Estimate { get; private set; }

        public List<TimeSpan> Left { get; } = [];

        public void RunEstimated(TimeSpan estimate, int caseCount) => Estimate = estimate;

        public void TimeLeft(TimeSpan remaining) => Left.Add(remaining);

        public void ScenarioStarted(Scenario scenario, ScenarioSize size, int caseCount)
        {
        }

        public void CaseStarted(Scenario scenario, LabCase labCase, int caseIndex, int caseCount)
        {
        }

        public void CaseFinished(Scenario scenario, CaseResult result, int caseIndex, int caseCount)
        {
        }

        public void ScenarioFinished(ScenarioResult result)
        {
        }
    }
}
