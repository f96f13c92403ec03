using System.Diagnostics;

using FanOut.Execution;

namespace FanOut.Tests.Execution;

/// <summary>
/// <see cref="CallPermits"/> as the only writer of a worker's part in the protocol: each transition moves the worker's
/// state and the call's count together, and a transition from a state it does not start from is caught (Debug builds).
/// </summary>
[Collection(nameof(DebugAssertCollection))]
public sealed class CallPermitsTests
{
    [Fact]
    public void Transitions_MoveTheWorkersStateAndTheCallsCountsTogether()
    {
        var limit = ConcurrencyLimit.Fixed(2);
        var permits = new CallPermits(limit, CancellationToken.None);
        var first = new Worker();
        permits.ReserveFirstWorker();
        CallPermits.AdoptReserved(first);
        Assert.Equal((WorkerHold.Seeking, 1, 1L), (first.Hold, permits.Seeking, permits.ActiveWorkers));

        Assert.True(permits.TryTake(first));
        Assert.Equal((WorkerHold.PoolPermit, 0, 1), (first.Hold, permits.Seeking, limit.InFlight));

        // Room for one more: reserved once, refused twice (the reservation covers the room).
        Assert.True(permits.TryReserveSeeker());
        Assert.False(permits.TryReserveSeeker());
        Assert.Equal(1, permits.StartReserved(1, maxWorkers: 10));
        var second = new Worker();
        CallPermits.AdoptReserved(second);
        Assert.Equal(2L, permits.ActiveWorkers);
        Assert.True(permits.TryTake(second));
        Assert.False(permits.TryTake(new Worker()));

        // Giving a permit back to wait for something else keeps the worker among the seekers.
        permits.ReturnToSeek(second);
        Assert.Equal((WorkerHold.Seeking, 1, 1), (second.Hold, permits.Seeking, limit.InFlight));
        Assert.True(permits.TryBecomeWaiter(second));
        Assert.Equal(WorkerHold.Seeking | WorkerHold.Waiter, second.Hold);

        permits.Give(first);
        Assert.True(permits.TryRetire(first));
        Assert.Equal((WorkerHold.Retired, 1L), (first.Hold, permits.ActiveWorkers));
        Assert.False(permits.Stop(first)); // retired: counted out already
    }

    [Fact]
    public async Task WaitAsWaiter_GrantedPermit_LeavesTheWaitAndTheSeekersInOneTransition()
    {
        var limit = ConcurrencyLimit.Fixed(1);
        Assert.True(limit.TryAcquire()); // someone outside the call holds the only permit
        var permits = new CallPermits(limit, CancellationToken.None);
        var worker = new Worker();
        permits.ReserveFirstWorker();
        CallPermits.AdoptReserved(worker);
        Assert.False(permits.TryTake(worker));
        Assert.True(permits.RoomMayComeFromOutside);
        Assert.True(permits.TryBecomeWaiter(worker));
        var other = new Worker();
        permits.EnsureSeeking(other);
        Assert.False(permits.TryBecomeWaiter(other)); // one waiter per call

        var wait = permits.WaitAsWaiterAsync(worker).AsTask();
        Assert.False(wait.IsCompleted);
        limit.Release();
        Assert.True(await wait.WaitAsync(TimeSpan.FromSeconds(20)));
        Assert.Equal((WorkerHold.PoolPermit, 1), (worker.Hold, permits.Seeking)); // the other one still seeks
        Assert.True(permits.TryBecomeWaiter(other)); // the waiter's place is free again
    }

    [Fact]
    public void LeaseQueue_AtMostTheLimitsWorth_EachPlaceASeekerInTheSameStep()
    {
        var limit = ConcurrencyLimit.Fixed(2);
        var permits = new CallPermits(limit, CancellationToken.None);
        var queued = new[] { new Worker(), new Worker(), new Worker() };
        Assert.True(permits.TryEnterLeaseQueue(queued[0]));
        Assert.True(permits.TryEnterLeaseQueue(queued[1]));
        Assert.False(permits.TryEnterLeaseQueue(queued[2]));
        Assert.Equal((2, 2), (permits.LeaseQueued, permits.Seeking));
        Assert.Equal(WorkerHold.Seeking | WorkerHold.LeaseQueued, queued[0].Hold);
        Assert.Equal(WorkerHold.None, queued[2].Hold);

        permits.LeaveLeaseQueue(queued[0]);
        Assert.Equal((1, 2, WorkerHold.Seeking), (permits.LeaseQueued, permits.Seeking, queued[0].Hold));
        permits.LeaveSeeking(queued[0]);
        Assert.Equal(1, permits.Seeking);
    }

#if DEBUG
    [Fact]
    public void IllegalTransitions_AreCaught()
    {
        var limit = ConcurrencyLimit.Fixed(2);
        var permits = new CallPermits(limit, CancellationToken.None);
        using var asserts = new ThrowingAsserts();

        // A permit given back that the worker does not hold; a second permit taken by a worker that holds one; a worker
        // that waits leaving the seekers; a waiter that is not a seeker.
        Assert.Throws<InvalidOperationException>(() => permits.Give(new Worker()));
        var holding = new Worker();
        Assert.True(permits.TryTake(holding));
        Assert.Throws<InvalidOperationException>(() => permits.TryTake(holding));
        Assert.Throws<InvalidOperationException>(() => permits.LeaveSeeking(new Worker { Hold = WorkerHold.Seeking | WorkerHold.Waiter }));
        Assert.Throws<InvalidOperationException>(() => permits.TryBecomeWaiter(new Worker()));
    }

    /// <summary>Turns Debug.Assert failures into exceptions while it lives (the default listener ends the process).</summary>
    private sealed class ThrowingAsserts : TraceListener, IDisposable
    {
        public ThrowingAsserts() => Trace.Listeners.Insert(0, this);

        public override void Fail(string? message, string? detailMessage) => throw new InvalidOperationException(message);

        public override void Write(string? message)
        {
        }

        public override void WriteLine(string? message)
        {
        }

        protected override void Dispose(bool disposing)
        {
            Trace.Listeners.Remove(this);
            base.Dispose(disposing);
        }
    }
#endif

    private sealed class Worker : PermitHolder;
}

/// <summary>Tests that change how Debug.Assert fails run alone.</summary>
[CollectionDefinition(nameof(DebugAssertCollection), DisableParallelization = true)]
public sealed class DebugAssertCollection;
