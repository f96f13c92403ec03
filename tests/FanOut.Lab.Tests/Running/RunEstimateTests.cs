using FanOut.Lab.Outcomes;
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
    public void For_RealIoCaseFoundLongByItsWarmUp_CountsTheWarmUpAndOneRun()
    {
        // Real I/O has no ideal time, so the runner warms up; a warm-up past LongRun is then measured once: two runs in all.
        // downstream-http-client's Fixed(16) row: 2,000 calls in waves of 16 x 10 ms, times the measured 1.55.
        var handler = ScenarioCatalog.Default.Scenarios.Single(s => s.Id == "downstream-http-client").Cases(ScenarioSize.Default)
            .Single(c => c.Strategy.Name.Contains("Fixed(16)", StringComparison.Ordinal));
        var estimates = s_estimate.For(new OneCaseScenario(handler), ScenarioSize.Default);

        var oneRunMs = 2000 / 16 * 10 * DownstreamHttpClientScenario.HttpClientCallsStrategy.MeasuredOverWaves;
        Assert.Equal(TimeSpan.FromSeconds(1) + TimeSpan.FromMilliseconds(400 + (2 * oneRunMs)), estimates[0]);
    }

    [Fact]
    public void For_CaseWithAMeasuredRun_UsesItNotTheIdealTime()
    {
        // Issue 18 item 9: the blocking Parallel.ForEach's ideal is 20 ms, its real run 46-52 s; the old guess was 20 s.
        var blocking = ScenarioCatalog.Default.Scenarios.Single(s => s.Id == "seed000-fanout500").Cases(ScenarioSize.Default)
            .Single(c => c.Strategy.Name == "Parallel.ForEach (default)");
        var estimates = s_estimate.For(new OneCaseScenario(blocking), ScenarioSize.Default);

        Assert.Equal(TimeSpan.FromSeconds(1 + 48), estimates[0]);
    }

    [Fact]
    public void For_FailingItems_CountTheRunUpToTheFirstFailureOnly()
    {
        // 100 items x 10 ms at ProcessorCount, item 10 throws: the run ends about when item 10 fails, not after 100 items.
        var failing = new LabCase(new ParallelForEachAsyncStrategy(2), () => new FailingWorkload(100, 10, [10]), 100);
        var whole = new LabCase(new ParallelForEachAsyncStrategy(2), () => new FailingWorkload(100, 10, []), 100);

        var estimates = new RunEstimate(RunPolicy.Once("one run") with { LongRun = null }, TimeSpan.Zero).For(new OneCaseScenario(failing, whole), ScenarioSize.Default);

        Assert.Equal(TimeSpan.FromMilliseconds((6 + 1) * 10), estimates[0]); // ceil(11 / 2) waves to the failure, one more wait
        Assert.Equal(TimeSpan.FromMilliseconds(50 * 10), estimates[1]);      // nothing fails: the whole run, 50 waves
    }

    [Fact]
    public void For_CallerCancels_CountsTheRunUpToTheCancellationOrOneWaitMoreWhenBodiesIgnoreIt()
    {
        var cancel = CancelPlan.After(TimeSpan.FromMilliseconds(50));
        var honoring = new LabCase(new ObservedStrategy(new ParallelForEachAsyncStrategy(2), cancel), () => new FailingWorkload(100, 200, []), 100);
        var ignoring = new LabCase(new ObservedStrategy(new WhenAllStrategy(), cancel), () => new FailingWorkload(100, 200, [], honorsToken: false), 100);

        var estimates = new RunEstimate(new RunPolicy(0, 1, 1, TimeSpan.Zero), TimeSpan.Zero).For(new OneCaseScenario(honoring, ignoring), ScenarioSize.Default);

        Assert.Equal(TimeSpan.FromMilliseconds(50), estimates[0]);
        Assert.Equal(TimeSpan.FromMilliseconds(200), estimates[1]); // min(ideal 200 ms, 50 + 200)
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
