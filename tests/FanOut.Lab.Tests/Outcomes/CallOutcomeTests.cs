using FanOut.Lab.Outcomes;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Tests.Outcomes;

public sealed class CallOutcomeTests
{
    [Fact]
    public void Of_NestedAggregates_CountsEveryLeafOnceAndSeparatesCancellations()
    {
        var first = new ItemFailedException(1);
        var thrown = new AggregateException(first, new AggregateException(new ItemFailedException(2), new OperationCanceledException()));

        var outcome = CallOutcome.Of(thrown, task: null);

        Assert.Equal(3, outcome.ExceptionsReachable);
        Assert.Equal(1, outcome.CancellationsReachable);
        Assert.Equal(2, outcome.FailuresReachable);
        Assert.Equal(nameof(TaskStatus.Faulted), outcome.FinalState);
        Assert.Null(outcome.ThrewItem);
    }

    [Fact]
    public void Of_FanOutExceptionWithMismatchedIndex_CountsOnlyFailuresTiedToTheirOwnItem()
    {
        var thrown = new FanOutException([new(3, new ItemFailedException(3)), new(4, new ItemFailedException(7))], itemCount: 10);

        Assert.Equal(1, CallOutcome.Of(thrown, task: null).FailuresIndexedByApi);
    }

    [Fact]
    public void Of_SynchronousCancellation_IsCanceled()
    {
        Assert.Equal(nameof(TaskStatus.Canceled), CallOutcome.Of(new OperationCanceledException(), task: null).FinalState);
        Assert.Equal(nameof(TaskStatus.RanToCompletion), CallOutcome.Of(null, task: null).FinalState);
    }
}
