using System.Globalization;

namespace FanOut.Execution;

/// <summary>
/// One worker's per-attempt deadline (<see cref="FanOutOptions.ItemTimeout"/>): a token canceled by the run's token or
/// after the timeout, on the limit's <see cref="TimeProvider"/>. Touched by its own worker only, and made only when the
/// option is set.
/// </summary>
/// <remarks>
/// The token source is reused from attempt to attempt (<see cref="CancellationTokenSource.TryReset"/>), so a run whose
/// items finish in time costs one source and one registration on the run's token per worker, not per item. A source that
/// was canceled (the deadline passed, or the run was canceled) cannot be reset and is replaced; so is one whose timer
/// belongs to a custom <see cref="TimeProvider"/> (the runtime resets only its own timers), which costs an allocation per
/// attempt under fake clocks only.
/// </remarks>
internal sealed class ItemDeadline(CancellationToken runToken, TimeSpan timeout, TimeProvider timeProvider) : IDisposable
{
    private CancellationTokenSource? _source;

    /// <summary>Links <see cref="_source"/> to the run's token: the run's cancellation reaches the body through it.</summary>
    private CancellationTokenRegistration _link;

    /// <summary>The timeout, for the exception's message.</summary>
    public TimeSpan Timeout => timeout;

    /// <summary>Starts an attempt's deadline; returns the token its body gets.</summary>
    public CancellationToken Start()
    {
        if (_source is null)
        {
            // The runtime's timer when the clock is the system's (TryReset can then stop it); the provider's otherwise.
            _source = timeProvider == TimeProvider.System
                ? new CancellationTokenSource()
                : new CancellationTokenSource(System.Threading.Timeout.InfiniteTimeSpan, timeProvider);
            _link = runToken.UnsafeRegister(static source => CancelQuietly((CancellationTokenSource)source!), _source);
        }

        _source.CancelAfter(timeout);
        return _source.Token;
    }

    /// <summary>Ends the attempt's deadline; true when it passed before the attempt ended and the run itself was not canceled.</summary>
    public bool End()
    {
        var source = _source!;
        if (source.TryReset())
        {
            return false; // in time: the timer is stopped and the source is ready for the next attempt
        }

        var expired = source.IsCancellationRequested && !runToken.IsCancellationRequested;
        Drop();
        return expired;
    }

    /// <summary>The failure of an attempt whose deadline passed: names the item and the timeout; the body's own failure, if any, is inner.</summary>
    public TimeoutException Expired(long index, Exception? failure) => new(
        string.Create(CultureInfo.InvariantCulture, $"Item {index} timed out after {timeout.TotalMilliseconds:0.###} ms (FanOutOptions.ItemTimeout)."),
        failure);

    public void Dispose() => Drop();

    /// <summary>Cancels a source the worker may be disposing at that moment (it dropped it after the deadline passed).</summary>
    private static void CancelQuietly(CancellationTokenSource source)
    {
        try
        {
            source.Cancel();
        }
        catch (ObjectDisposedException)
        {
            // The attempt is over and its source dropped: nothing is left to cancel.
        }
    }

    private void Drop()
    {
        // Unregister without waiting: a callback already running only cancels the source, which tolerates a concurrent Dispose.
        _link.Unregister();
        _source?.Dispose();
        _source = null;
        _link = default;
    }
}
