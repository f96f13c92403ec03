using FanOut.Lab.Outcomes;
using FanOut.Lab.Strategies;
using FanOut.Lab.Workloads;

using Microsoft.Extensions.Time.Testing;

namespace FanOut.Lab.Tests.Outcomes;

/// <summary>What the observed strategies report on a first failure and on the caller's cancellation. The items wait on a
/// fake clock that the test advances, and the caller cancels when a given item starts, so every count is deterministic.</summary>
public sealed class ObservedStrategyTests
{
    private const int Items = 6;
    private const int DelayMs = 10;

    [Fact]
    public async Task RunAsync_WhenAllOneItemThrows_EveryOtherItemRunsToCompletion()
    {
        var outcome = await ObserveAsync(new WhenAllStrategy(), failing: [2]);

        Assert.Equal(Items, outcome.ItemsStarted);
        Assert.Equal(Items - 1, outcome.Completed);
        Assert.Equal(1, outcome.Failed);
        Assert.Equal(nameof(TaskStatus.Faulted), outcome.FinalState);
        Assert.Equal(nameof(ItemFailedException), outcome.Threw);
        Assert.Equal(2, outcome.ThrewItem);
        Assert.Equal(0, outcome.RunningAtReturn);
        Assert.NotNull(outcome.StopMs);
    }

    [Fact]
    public async Task RunAsync_ForEachAsyncOneAtATimeItemThrows_StopsSchedulingNewItems()
    {
        var outcome = await ObserveAsync(new ParallelForEachAsyncStrategy(1), failing: [2]);

        Assert.Equal(3, outcome.ItemsStarted);
        Assert.Equal(0, outcome.StartedAfterTrigger);
        Assert.Equal(2, outcome.Completed);
        Assert.Equal(2, outcome.FirstFailedItem);
    }

    [Fact]
    public async Task RunAsync_WhenAllSeveralThrow_AwaitGivesOneAndTheTaskHoldsAll()
    {
        var outcome = await ObserveAsync(new WhenAllStrategy(), failing: [1, 3, 5]);

        Assert.Equal(3, outcome.Failed);
        Assert.Equal(3, outcome.FailuresReachable);
        Assert.Equal(3, outcome.ExceptionsReachable);
        Assert.Equal(0, outcome.FailuresIndexedByApi);
        Assert.Contains(outcome.ThrewItem!.Value, new[] { 1, 3, 5 });
    }

    [Fact]
    public async Task RunAsync_FanOutRunAllSeveralThrow_TiesEveryFailureToItsIndex()
    {
        var outcome = await ObserveAsync(FanOutStrategy.Fixed(2, ErrorMode.RunAll), failing: [1, 4]);

        Assert.Equal(Items - 2, outcome.Completed);
        Assert.Equal(nameof(FanOutException), outcome.Threw);
        Assert.Equal(2, outcome.FailuresReachable);
        Assert.Equal(2, outcome.FailuresIndexedByApi);
    }

    [Fact]
    public async Task RunAsync_CallerCancelsAndTasksHonorTheToken_EveryItemIsCanceled()
    {
        var outcome = await ObserveAsync(new WhenAllStrategy(), cancel: CancelPlan.AtItemStart(Items - 1));

        Assert.Equal(Items, outcome.Canceled);
        Assert.Equal(0, outcome.Completed);
        Assert.Equal(nameof(TaskStatus.Canceled), outcome.FinalState);
        Assert.Equal(0, outcome.RunningAtReturn);
    }

    [Fact]
    public async Task RunAsync_CallerCancelsAndTasksIgnoreTheToken_WhenAllRunsEveryItemToItsEnd()
    {
        var outcome = await ObserveAsync(new WhenAllStrategy(), cancel: CancelPlan.AtItemStart(0), honorsToken: false);

        Assert.Equal(Items - 1, outcome.StartedAfterTrigger);
        Assert.Equal(Items, outcome.Completed);
        Assert.Equal(nameof(TaskStatus.RanToCompletion), outcome.FinalState);
        Assert.Equal(CallOutcome.Nothing, outcome.Threw);
    }

    [Fact]
    public async Task RunAsync_WaitAsyncOverTasksIgnoringTheToken_ReturnsWithEveryItemStillRunning()
    {
        var workload = new FailingWorkload(Items, DelayMs, [], honorsToken: false, new FakeTimeProvider());
        var outcome = await ObserveAsync(new WhenAllWaitAsyncStrategy(), workload, CancelPlan.AtItemStart(Items - 1));

        Assert.Equal(Items, outcome.RunningAtReturn);
        Assert.Equal(nameof(TaskStatus.Canceled), outcome.FinalState);

        // The observer awaited the work the call left behind before it returned.
        Assert.Equal(0, workload.Outcomes.Running);
        Assert.Equal(Items, workload.Probe.Started);
    }

    [Fact]
    public async Task RunAsync_ForEachAsyncCanceledAtThirdItem_StartsNothingAfterIt()
    {
        var outcome = await ObserveAsync(new ParallelForEachAsyncStrategy(1), cancel: CancelPlan.AtItemStart(2));

        Assert.Equal(3, outcome.ItemsStarted);
        Assert.Equal(2, outcome.Completed);
        Assert.Equal(1, outcome.Canceled);
        Assert.Equal(0, outcome.StartedAfterTrigger);
        Assert.Equal(nameof(TaskStatus.Canceled), outcome.FinalState);
    }

    [Fact]
    public async Task RunAsync_WorkloadThatDoesNotRecordOutcomes_IsRefused()
    {
        var observed = new ObservedStrategy(new WhenAllStrategy());
        await Assert.ThrowsAsync<ArgumentException>(() => observed.RunAsync(new DelayWorkload(DelaySchedule.Fixed(1, 1)), [0], CancellationToken.None));
    }

    private static Task<OutcomeRunMetrics> ObserveAsync(Strategy inner, int[]? failing = null, CancelPlan? cancel = null, bool honorsToken = true) =>
        ObserveAsync(inner, new FailingWorkload(Items, DelayMs, failing ?? [], honorsToken, new FakeTimeProvider()), cancel);

    /// <summary>Runs the observed call to its end, moving the fake clock on until every wait is over.</summary>
    private static async Task<OutcomeRunMetrics> ObserveAsync(Strategy inner, FailingWorkload workload, CancelPlan? cancel)
    {
        var clock = (FakeTimeProvider)workload.Outcomes.TimeProvider;
        var observed = new ObservedStrategy(inner, cancel);
        var run = observed.RunAsync(workload, Enumerable.Range(0, Items).ToArray(), CancellationToken.None);
        while (!run.IsCompleted)
        {
            clock.Advance(TimeSpan.FromMilliseconds(DelayMs));

            // Lets the items that the advance released run on the pool before the next advance.
            await Task.Delay(1);
        }

        await run;
        return observed.LastOutcome!;
    }
}
