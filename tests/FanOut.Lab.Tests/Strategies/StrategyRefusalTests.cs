using FanOut.Lab.Running;
using FanOut.Lab.Scenarios;
using FanOut.Lab.Strategies;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Tests.Strategies;

public sealed class StrategyRefusalTests
{
    [Fact]
    public void Refusal_AsyncWorkloadInParallelForEach_ExplainsAsyncVoid()
    {
        var refusal = new ParallelForEachStrategy().Refusal(new DelayWorkload(DelaySchedule.Fixed(1, 1)));
        Assert.NotNull(refusal);
        Assert.Contains("async void", refusal);
    }

    [Fact]
    public void Refusal_BlockingWorkloadInParallelForEach_IsNull()
    {
        Assert.Null(new ParallelForEachStrategy().Refusal(new SyncOverAsyncWorkload(DelaySchedule.Fixed(1, 1))));
    }

    [Fact]
    public void Run_RefusedPairing_ReturnsFailedCaseWithoutRunningAnything()
    {
        var workload = new DelayWorkload(DelaySchedule.Fixed(1, 3));
        var result = new InProcessCaseRunner(new RunPolicy(0, 1, 1, TimeSpan.Zero)).Run(new LabCase(new ParallelForStrategy(2), () => workload, 3));
        Assert.False(result.Succeeded);
        Assert.Contains("synchronous body", result.Error);
        Assert.Equal(0, workload.Probe.Started);
    }

    [Fact]
    public void Constructor_ZeroLimit_ThrowsNamingTheParameter()
    {
        var ex = Assert.Throws<ArgumentOutOfRangeException>(() => new SemaphoreSlimWhenAllStrategy(0));
        Assert.Equal("limit", ex.ParamName);
    }
}
