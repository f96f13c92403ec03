using System.Diagnostics;

namespace FanOut.Redis.Infrastructure;

/// <summary>
/// What a <see cref="RedisConcurrencyLimit"/> has left to do on its own: its background loops that are not waiting (a loop
/// woken and not yet run counts), the subscription being made, the pub/sub messages being handled. Zero means nothing will happen until its clock moves
/// or a caller (a worker, a message) starts something: what <see cref="RedisConcurrencyLimit.WhenSettledAsync"/> waits for.
/// </summary>
/// <remarks>
/// <para>A loop counts as busy from its start until it waits (<see cref="DelayAsync"/>, <see cref="WakeSignal.WaitAsync"/>),
/// and again from the moment its wait ends. The wait is ended by whoever ends it (a timer's callback, a signal's
/// <see cref="WakeSignal.Set"/>, the stop token), which counts the loop busy before it completes the wait: so between a fake
/// clock's <c>Advance</c> firing a loop's timer and the loop's continuation running, the count is already not zero. Round
/// trips run inside loop steps, so a loop waiting for Redis is busy.</para>
/// <para><see cref="Wakeups"/> grows at each of these starts; a driver that settled every limit of a fleet compares it
/// before and after, since one limit's round trip may publish a message another handles after it settled.</para>
/// </remarks>
internal sealed class LoopActivity
{
    private readonly Lock _lock = new();
    private int _busy;
    private long _wakeups;

    /// <summary>Completed when <see cref="_busy"/> reaches zero; created by the first <see cref="WhenIdleAsync"/> that finds it above.</summary>
    private TaskCompletionSource? _idle;

    /// <summary>Busy loops and messages being handled.</summary>
    public int Busy => Volatile.Read(ref _busy);

    /// <summary>Every start of work so far: a loop woken or started, a message handled.</summary>
    public long Wakeups => Volatile.Read(ref _wakeups);

    /// <summary>Work starts (a loop wakes or starts, a message arrives).</summary>
    public void Enter()
    {
        Interlocked.Increment(ref _wakeups);
        Interlocked.Increment(ref _busy);
    }

    /// <summary>Work ends (a loop waits or ends, a message was handled).</summary>
    public void Exit()
    {
        if (Interlocked.Decrement(ref _busy) != 0)
        {
            return;
        }

        TaskCompletionSource? idle;
        lock (_lock)
        {
            AssertInvariants();

            // Work may have started again since the decrement: then its own Exit completes the wait.
            if (Volatile.Read(ref _busy) != 0)
            {
                return;
            }

            idle = _idle;
            _idle = null;
        }

        idle?.TrySetResult(); // continuations run asynchronously: nothing runs under the lock or on this loop's stack
    }

    /// <summary>Completes when nothing is busy (at once if nothing is).</summary>
    public Task WhenIdleAsync()
    {
        lock (_lock)
        {
            AssertInvariants();
            return Volatile.Read(ref _busy) == 0 ? Task.CompletedTask : (_idle ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).Task;
        }
    }

    /// <summary>A loop's timed wait: the loop is idle until <paramref name="delay"/> has passed on <paramref name="time"/> (or <paramref name="cancellationToken"/> is canceled).</summary>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled.</exception>
    public async Task DelayAsync(TimeSpan delay, TimeProvider time, CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        if (delay <= TimeSpan.Zero)
        {
            return;
        }

        var wake = new Wakeup(this);
        Exit();
        using (var timer = time.CreateTimer(static state => ((Wakeup)state!).Wake(), wake, delay, Timeout.InfiniteTimeSpan))
        using (cancellationToken.UnsafeRegister(static state => ((Wakeup)state!).Wake(), wake))
        {
            await wake.Task.ConfigureAwait(false);
        }

        cancellationToken.ThrowIfCancellationRequested();
    }

    [Conditional("DEBUG")]
    private void AssertInvariants()
    {
        Debug.Assert(_lock.IsHeldByCurrentThread);
        Debug.Assert(Volatile.Read(ref _busy) >= 0);
    }

    /// <summary>One wait of a loop: the first of its wake-ups counts the loop busy again, then lets it run.</summary>
    internal sealed class Wakeup(LoopActivity activity) : TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
    {
        private int _woken;

        public void Wake()
        {
            if (Interlocked.Exchange(ref _woken, 1) == 0)
            {
                activity.Enter();
                TrySetResult();
            }
        }
    }
}
