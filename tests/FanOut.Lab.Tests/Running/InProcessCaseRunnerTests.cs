using FanOut.Lab.Running;
using FanOut.Lab.Scenarios;
using FanOut.Lab.Strategies;
using FanOut.Lab.Tests.Workloads;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Tests.Running;

public sealed class InProcessCaseRunnerTests
{
    private static readonly RunPolicy s_quick = new(1, 2, 2, TimeSpan.Zero);

    [Fact]
    public void Run_WaitingCase_MeasuresRunsPeakAndIdeal()
    {
        var result = new InProcessCaseRunner(s_quick).Run(new LabCase(new ParallelForEachAsyncStrategy(4), () => new RecordingWorkload(12, 10), 12));
        Assert.True(result.Succeeded, result.Error);
        Assert.Equal(2, result.Runs);
        Assert.Equal(4, result.PeakInFlight);
        Assert.Equal(12, result.ItemsStarted);
        Assert.Equal(30, result.IdealMs);             // ceil(12 / 4) x 10 ms
        Assert.InRange(result.MeanMs, 30, 10_000);     // can never beat the ideal
        Assert.InRange(result.Efficiency, 0.0001, 1.0);
        Assert.True(result.ThreadPoolThreadsPeak >= 1);
        Assert.True(result.ProcessThreadsPeak >= result.ProcessThreadsStart);
        Assert.NotNull(result.ErrorMs);
    }

    [Fact]
    public void Run_CpuCase_CalibratesCpuCostAndCapsIdealAtCores()
    {
        var result = new InProcessCaseRunner(s_quick).Run(new LabCase(new WhenAllStrategy(), () => new SumLoopWorkload(200_000), 8));
        Assert.True(result.Succeeded, result.Error);
        Assert.True(result.CpuMsPerItem > 0);
        var cores = Math.Min(Environment.ProcessorCount, 8);
        Assert.Equal(8 * result.CpuMsPerItem / cores, result.IdealMs, 9);

        // The synchronous projection never yields: one item at a time.
        Assert.Equal(1, result.PeakInFlight);
        Assert.True(result.CpuTimeMs > 0);
    }

    [Fact]
    public void Run_AllocatingCase_CountsAllocatedBytes()
    {
        var result = new InProcessCaseRunner(s_quick).Run(new LabCase(new TaskRunWhenAllStrategy(), () => new DelayWorkload(DelaySchedule.Fixed(1, 200)), 200));
        Assert.True(result.Succeeded, result.Error);

        // 200 Task.Run tasks, closures and delay state machines cannot fit in 10 KB.
        Assert.True(result.AllocatedBytes > 10_000, $"allocated {result.AllocatedBytes}");
        Assert.True(result.CompletedWorkItems >= 200, $"work items {result.CompletedWorkItems}");
    }

    [Fact]
    public void Run_AdaptiveCaseAfterAWarmUpThatClimbed_TimelineStartsAtTheInitialLimit()
    {
        var result = new InProcessCaseRunner(s_quick).Run(new LabCase(FanOutStrategy.Adaptive(), () => new RecordingWorkload(400, 1), 400));
        Assert.True(result.Succeeded, result.Error);
        Assert.True(result.LimitPeak > 2, $"the limit never climbed (peak {result.LimitPeak}): a stale first sample would look the same");

        // The first point is the fresh limit's start, not where the warm-up (or the previous run) left it.
        var limit = result.Timeline!.Limit!;
        Assert.Equal(new AdaptiveLimitOptions().InitialLimit, limit[0]);
    }

    [Fact]
    public void Run_AdaptiveCase_TimelineHasTheMeasuredRunsDecisionsAndAFixedOneNone()
    {
        var adaptive = new InProcessCaseRunner(s_quick).Run(new LabCase(FanOutStrategy.Adaptive(), () => new RecordingWorkload(400, 1), 400));
        var fixedLimit = new InProcessCaseRunner(s_quick).Run(new LabCase(FanOutStrategy.Fixed(8), () => new RecordingWorkload(40, 1), 40));
        Assert.True(adaptive.Succeeded, adaptive.Error);
        Assert.True(adaptive.LimitPeak > 2, $"the limit never climbed (peak {adaptive.LimitPeak}): there would be no decision to record");

        // The recorded run's own limit, from its start: slow start leaves the initial limit, and climbs as far as the timeline saw.
        var decisions = adaptive.Timeline!.Decisions!;
        Assert.NotEmpty(decisions);
        Assert.Contains(decisions, d => d.From == new AdaptiveLimitOptions().InitialLimit && d.Reason == nameof(LimitChangeReason.SlowStartGrowth));
        Assert.True(decisions.Max(d => d.To) >= adaptive.Timeline.Limit!.Max(), "the timeline's limit rose above every recorded decision");
        Assert.Equal(0, adaptive.Timeline.DecisionsDropped);

        Assert.Null(fixedLimit.Timeline!.Decisions);
    }
}
