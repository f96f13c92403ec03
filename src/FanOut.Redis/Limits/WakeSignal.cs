using FanOut.Redis.Infrastructure;

namespace FanOut.Redis;

/// <summary>An auto-reset signal one background loop waits on: a <see cref="Set"/> before or during a wait wakes it once.</summary>
/// <remarks>
/// The waiting loop is counted busy in <paramref name="owner"/> by the <see cref="Set"/> that wakes it, before its
/// continuation runs (see <see cref="LoopActivity"/>). A signal set while its loop is busy, or waits for something else (a
/// linger's timer), is not work by itself: the loop takes it at its next wait.
/// </remarks>
/// <param name="owner">The owning limit's activity count; a signal of its own when null (a test's).</param>
internal sealed class WakeSignal(LoopActivity? owner = null)
{
    private readonly LoopActivity _activity = owner ?? new LoopActivity();

    /// <summary>1 while set and not yet consumed by a wait.</summary>
    private int _set;

    /// <summary>The wait in progress, if any: <see cref="Set"/> ends it.</summary>
    private LoopActivity.Wakeup? _waiting;

    /// <summary>Wakes the waiting loop, or the next wait if none is waiting.</summary>
    public void Set()
    {
        Interlocked.Exchange(ref _set, 1); // a full fence before the look at the wait: see WaitAsync
        Interlocked.Exchange(ref _waiting, null)?.Wake();
    }

    /// <summary>Waits for <see cref="Set"/>, at most <paramref name="timeout"/> (null: no timeout), then consumes the signal.</summary>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled.</exception>
    public async Task WaitAsync(TimeSpan? timeout, TimeProvider time, CancellationToken cancellationToken)
    {
        if (TryConsume())
        {
            return;
        }

        cancellationToken.ThrowIfCancellationRequested();
        var wake = new LoopActivity.Wakeup(_activity);
        Interlocked.Exchange(ref _waiting, wake); // a full fence before the look at the signal: see Set

        // A Set between the look above and the publication of this wait found no wait to end: end it here. Only then
        // is this loop idle, so the count never reads zero while a set signal is about to wake it.
        if (Volatile.Read(ref _set) != 0)
        {
            wake.Wake();
        }

        _activity.Exit(); // this loop waits (a Wake above or from now on counts it busy again)

        var timer = timeout is { } limit ? time.CreateTimer(static state => ((LoopActivity.Wakeup)state!).Wake(), wake, limit, Timeout.InfiniteTimeSpan) : null;
        try
        {
            using (cancellationToken.UnsafeRegister(static state => ((LoopActivity.Wakeup)state!).Wake(), wake))
            {
                await wake.Task.ConfigureAwait(false);
            }
        }
        finally
        {
            timer?.Dispose(); // no timer outlives the wait
            Interlocked.CompareExchange(ref _waiting, null, wake);
        }

        TryConsume();
        cancellationToken.ThrowIfCancellationRequested();
    }

    private bool TryConsume() => Interlocked.Exchange(ref _set, 0) != 0;
}
