namespace FanOut.Redis.Infrastructure;

/// <summary>Runs one background loop of a <see cref="RedisConcurrencyLimit"/> until it is stopped: the one place a loop's failures are handled.</summary>
/// <remarks>
/// <para>A step may throw whatever its dependency throws. StackExchange.Redis reports an unanswered command as
/// <c>RedisTimeoutException</c>, a <see cref="TimeoutException"/> and not a <c>RedisException</c>; a lost connection as
/// <c>RedisConnectionException</c>; a refusal (<c>OOM</c>, <c>LOADING</c>, <c>READONLY</c>) as <c>RedisServerException</c>; a
/// disposed multiplexer as <see cref="ObjectDisposedException"/>; and the limit's own bound on a round trip as
/// <see cref="TimeoutException"/>. None of them may end the loop: a loop that dies quietly stops renewing leases (so the
/// fleet exceeds its budget) or returning them. So every exception but the stop goes to the loop's handler, the loop
/// waits its backoff, and the next step runs.</para>
/// <para>The returned task never faults: <see cref="RedisConcurrencyLimit.DisposeAsync"/> awaits it and must not rethrow.</para>
/// </remarks>
internal static class BackgroundLoop
{
    /// <summary>Runs <paramref name="step"/> again and again until <paramref name="stop"/> is canceled.</summary>
    /// <param name="step">One round of the loop, including its own waits.</param>
    /// <param name="onFailure">Told of every exception a step threw, before the backoff; must not throw.</param>
    /// <param name="backoff">How long to wait after a failed step before the next.</param>
    /// <param name="time">The clock of the backoff.</param>
    /// <param name="activity">Counts the loop busy except while it waits (<see cref="LoopActivity"/>); its step's waits go through it too.</param>
    /// <param name="stop">Ends the loop.</param>
    public static Task RunAsync(Func<CancellationToken, Task> step, Action<Exception> onFailure, Func<TimeSpan> backoff, TimeProvider time, LoopActivity activity, CancellationToken stop)
    {
        // Busy from the call on, not from the first step: the loop has not waited yet.
        activity.Enter();
        return RunBusyAsync(step, onFailure, backoff, time, activity, stop);
    }

    private static async Task RunBusyAsync(Func<CancellationToken, Task> step, Action<Exception> onFailure, Func<TimeSpan> backoff, TimeProvider time, LoopActivity activity, CancellationToken stop)
    {
        try
        {
            // Off the caller's stack: the first step may complete synchronously for a while.
            await Task.Yield();
            await LoopAsync(step, onFailure, backoff, time, activity, stop).ConfigureAwait(false);
        }
        finally
        {
            activity.Exit();
        }
    }

    private static async Task LoopAsync(Func<CancellationToken, Task> step, Action<Exception> onFailure, Func<TimeSpan> backoff, TimeProvider time, LoopActivity activity, CancellationToken stop)
    {
        while (!stop.IsCancellationRequested)
        {
            try
            {
                await step(stop).ConfigureAwait(false);
                continue;
            }
            catch (OperationCanceledException) when (stop.IsCancellationRequested)
            {
                return;
            }
            catch (Exception e)
            {
                onFailure(e);
            }

            try
            {
                await activity.DelayAsync(backoff(), time, stop).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                return;
            }
        }
    }
}
