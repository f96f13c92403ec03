namespace FanOut.Limits.Adaptive;

/// <summary>
/// A one-shot timer on a limit's <see cref="TimeProvider"/>, made on its first use and re-armed after, that calls
/// <c>onDue</c> once per arming. A callback that finds its work not yet due (or more of it pending) arms it again; an
/// arming that a later one overrides is harmless, because the callback reads the state, not the arming. Armed outside the
/// limit's lock (the provider is the user's), and without the ambient execution context of whichever item armed it first.
/// </summary>
internal sealed class LimitTimer(TimeProvider time, Action<object?> onDue, object state)
{
    private ITimer? _timer;

    /// <summary>Fires <c>onDue</c> in <paramref name="due"/> ticks of the provider's timestamp.</summary>
    public void Arm(long due)
    {
        var timer = Volatile.Read(ref _timer);
        if (timer is null)
        {
            using (ExecutionContext.IsFlowSuppressed() ? default : ExecutionContext.SuppressFlow())
            {
                var created = time.CreateTimer(static s => ((LimitTimer)s!).Fire(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
                timer = Interlocked.CompareExchange(ref _timer, created, null) ?? created;
                if (!ReferenceEquals(timer, created))
                {
                    created.Dispose();
                }
            }
        }

        timer.Change(TimeSpan.FromSeconds((double)due / time.TimestampFrequency), Timeout.InfiniteTimeSpan);
    }

    private void Fire() => onDue(state);
}
