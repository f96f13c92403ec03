using FanOut.Downstream;
using FanOut.Downstream.Latency;
using FanOut.Lab.Outcomes;
using FanOut.Lab.Results;
using FanOut.Lab.Running;
using FanOut.Lab.Scenarios;
using FanOut.Lab.Strategies;
using FanOut.Lab.Tests.Scenarios;
using FanOut.Lab.Workloads;
using FanOut.Lab.Workloads.RealIo;

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
        // downstream-http-client's Fixed(16) row: 2,000 calls in waves of 16 x the latency's mean (lognormal:10,p99=40: 11.95 ms)
        // and their own cost, times the measured correction.
        var handler = ScenarioCatalog.Default.Scenarios.Single(s => s.Id == "downstream-http-client").Cases(ScenarioSize.Default)
            .Single(c => c.Strategy.Name.Contains("Fixed(16)", StringComparison.Ordinal));
        var estimates = s_estimate.For(new OneCaseScenario(handler), ScenarioSize.Default);

        var meanMs = new LogNormalLatency(10, 40).MeanMilliseconds;
        var oneRunMs = ((2000 / 16 * meanMs) + (2000 / HttpGetWorkload.LoopbackCallsPerSecond * 1000)) * DownstreamHttpClientScenario.HttpClientCallsStrategy.MeasuredOverWaves;
        var expectedMs = 1_000 + handler.CreateWorkload().EstimateSetupMs + (2 * oneRunMs);
        Assert.InRange(estimates[0].TotalMilliseconds, expectedMs - 0.01, expectedMs + 0.01);
    }

    [Fact]
    public void For_SlowerMachine_ScalesTheChildStartUpAndTheSetUpButNotTheWaits()
    {
        // A machine 1.5x slower at CPU work starts each child 1.5x slower and sets a server up 1.5x slower; a 100 ms wait is
        // still 100 ms.
        var server = new DownstreamOptions { Capacity = 64, Queue = 64, Latency = LatencySpec.Parse("fixed:20") };
        var scenario = new OneCaseScenario(
            new LabCase(new WhenAllStrategy(), () => new DelayWorkload(DelaySchedule.Fixed(100, 10)), 10),
            new LabCase(new ParallelForEachAsyncStrategy(2), () => new HttpGetWorkload(server, TimeSpan.FromSeconds(5), 100), 100, Policy: new RunPolicy(0, 1, 1, TimeSpan.Zero)));
        var policy = RunPolicy.Default;

        var atReference = new RunEstimate(policy, TimeSpan.FromSeconds(1)).For(scenario, ScenarioSize.Default);
        var slower = new RunEstimate(policy, TimeSpan.FromSeconds(1)) { MachineSlowdown = 1.5 }.For(scenario, ScenarioSize.Default);

        Assert.Equal(atReference[0] + TimeSpan.FromSeconds(0.5), slower[0]);                      // the overhead only
        var setupMs = new HttpGetWorkload(server, TimeSpan.FromSeconds(5), 100).EstimateSetupMs;
        Assert.Equal(atReference[1] + TimeSpan.FromMilliseconds(500 + (setupMs / 2)), slower[1]); // overhead and set-up
    }

    [Fact]
    public void For_WaitingCaseOfTenthsOfASecond_UsesItsWholeBudget()
    {
        // 100 ms waits: a timer's jitter keeps the error above 2% of the mean for more runs than the budget holds, so the
        // case runs until its 1 s budget is spent (seed001-io's 100 ms cases took 1.1-1.4 s each on the 2-core VM).
        var scenario = new OneCaseScenario(new LabCase(new WhenAllStrategy(), () => new DelayWorkload(DelaySchedule.Fixed(100, 10)), 10));

        var estimates = s_estimate.For(scenario, ScenarioSize.Default);

        Assert.Equal(TimeSpan.FromSeconds(1) + TimeSpan.FromMilliseconds(100 + 1_000), estimates[0]); // overhead, warm-up, budget
    }

    [Fact]
    public void For_LogNormalServer_TakesWavesOfTheMeanLatencyNotTheMedian()
    {
        // A slot serves 1000 / mean calls a second: 2,000 calls at 2 at once of lognormal:20,p99=80 (mean 23.9 ms) take 1,000
        // waves of 23.9 ms (downstream-capacity's default-DOP row took 26.6 s; the median's 20 s was 1.3x short).
        var server = new DownstreamOptions { Capacity = 64, Queue = 64, Latency = LatencySpec.Parse("lognormal:20,p99=80") };
        var workload = new HttpGetWorkload(server, TimeSpan.FromSeconds(5), 2000);

        var runMs = workload.EstimateRunMs(0, 2);

        Assert.Equal((1000 * server.Latency.MeanMilliseconds) + (2000 / HttpGetWorkload.LoopbackCallsPerSecond * 1000), runMs, 6);
        Assert.InRange(server.Latency.MeanMilliseconds, 23.8, 24.0);
    }

    [Fact]
    public void For_PriceSync_IsWavesOfAGetAndALoneWriteOrSqlitesQueuedWritesWhicheverIsLonger()
    {
        // 1,000 products, lognormal:10,p99=40 (mean 11.95 ms), capacity 200 + queue 1,000.
        var server = new DownstreamOptions { Capacity = 200, Queue = 1000, Latency = LatencySpec.Parse("lognormal:10,p99=40") };
        var workload = new PriceSyncWorkload(server, TimeSpan.FromSeconds(5), 1000);
        var waveMs = server.Latency.MeanMilliseconds + PriceSyncWorkload.LoneWriteMs;

        Assert.Equal(500 * waveMs, workload.EstimateRunMs(0, 2), 6);                                  // default DOP: 500 waves
        Assert.Equal(63 * waveMs, workload.EstimateRunMs(0, 16), 6);                                  // DOP 16: ceil(1000 / 16) waves
        Assert.Equal(1000 * PriceSyncWorkload.QueuedWriteMs, workload.EstimateRunMs(0, 1000), 6);    // everything at once: the writer's queue
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
    public void For_RateLimitedServer_BurstsEndWhenEveryItemWasTriedAndPacedRunsTakeTheItemsOverTheRate()
    {
        // 2,000 calls against 500/s, 20 ms each. Fixed(50) asks for 2,500/s and counts each 429: refused calls come back at
        // once, so the run ends when every item was tried once. DOP 10 asks for exactly 500/s; the body that throws each 429
        // has it run again until served; a 500/s bucket in front of Fixed(50) paces it: 2,000 / 500 = 4 s each.
        // (downstream-rate-limit had estimated the bursts at 4.3 s a run; they took ~0.1 s.)
        var server = new DownstreamOptions { Capacity = 64, Queue = 64, RatePerSecond = 500, Latency = LatencySpec.Parse("fixed:20") };
        Workload Get() => new HttpGetWorkload(server, TimeSpan.FromSeconds(5), 2000);
        var setupMs = Get().EstimateSetupMs;

        var estimates = new RunEstimate(new RunPolicy(0, 1, 1, TimeSpan.Zero), TimeSpan.Zero).For(new OneCaseScenario(
            new LabCase(FanOutStrategy.Fixed(50), Get, 2000),
            new LabCase(new ParallelForEachAsyncStrategy(10), Get, 2000),
            new LabCase(FanOutStrategy.Adaptive(), () => new HttpGetWorkload(server, TimeSpan.FromSeconds(5), 2000) { ThrowOnOverload = true }, 2000),
            new LabCase(FanOutStrategy.FixedWithRate(50, 500), Get, 2000)), ScenarioSize.Default);

        var callsMs = 2000 / HttpGetWorkload.LoopbackCallsPerSecond * 1000;
        Assert.Equal(TimeSpan.FromMilliseconds(setupMs + 20 + (2000 / HttpGetWorkload.RefusalsPerSecond * 1000)), estimates[0]);
        Assert.Equal(TimeSpan.FromMilliseconds(setupMs + 4000 + callsMs), estimates[1]); // 200 waves of 20 ms, and the calls' own cost
        Assert.Equal(TimeSpan.FromMilliseconds(setupMs + 4000), estimates[2]);
        Assert.Equal(TimeSpan.FromMilliseconds(setupMs + 4000), estimates[3]);
    }

    [Fact]
    public void For_ServerThatCrashes_CountsTheWavesUpToTheCrashOnly()
    {
        // 500 calls at 2 at once, the server crashes on call 201: 100 waves of 20 ms, then every call is refused at once.
        // (downstream-crash had estimated its default-DOP row at 5 s a run; it took 2.4-2.8 s.)
        var crashing = new DownstreamOptions { Capacity = 64, Queue = 64, CrashAfterRequests = 200, Latency = LatencySpec.Parse("fixed:20") };
        Workload Get() => new HttpGetWorkload(crashing, TimeSpan.FromSeconds(2), 500);

        var estimates = new RunEstimate(new RunPolicy(0, 1, 1, TimeSpan.Zero), TimeSpan.Zero).For(
            new OneCaseScenario(new LabCase(new ParallelForEachAsyncStrategy(2), Get, 500)), ScenarioSize.Default);

        Assert.Equal(TimeSpan.FromMilliseconds(Get().EstimateSetupMs + (100 * 20) + (500 / HttpGetWorkload.LoopbackCallsPerSecond * 1000)), estimates[0]);
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
