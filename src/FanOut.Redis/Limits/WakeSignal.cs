namespace FanOut.Redis;

/// <summary>An auto-reset signal one background loop waits on: a <see cref="Set"/> before or during a wait wakes it once.</summary>
internal sealed class WakeSignal
{
    private TaskCompletionSource _signal = New();

    /// <summary>Wakes the waiting loop, or the next wait if none is waiting.</summary>
    public void Set() => Volatile.Read(ref _signal).TrySetResult();

    /// <summary>Waits for <see cref="Set"/>, at most <paramref name="timeout"/> (null: no timeout), then consumes the signal.</summary>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled.</exception>
    public async Task WaitAsync(TimeSpan? timeout, TimeProvider time, CancellationToken cancellationToken)
    {
        var signal = Volatile.Read(ref _signal);
        if (!signal.Task.IsCompleted)
        {
            if (timeout is not { } limit)
            {
                await signal.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
            }
            else
            {
                // The delay is canceled once the signal wins, so no timer outlives the wait.
                using var stopDelay = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
                var delay = Task.Delay(limit, time, stopDelay.Token);
                await Task.WhenAny(signal.Task, delay).ConfigureAwait(false);
                await stopDelay.CancelAsync().ConfigureAwait(false);
                await delay.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
                cancellationToken.ThrowIfCancellationRequested();
            }
        }

        if (signal.Task.IsCompleted)
        {
            // A Set after this exchange completes the new signal, so it is never lost.
            Interlocked.CompareExchange(ref _signal, New(), signal);
        }
    }

    private static TaskCompletionSource New() => new(TaskCreationOptions.RunContinuationsAsynchronously);
}
