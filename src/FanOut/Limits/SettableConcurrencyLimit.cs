namespace FanOut;

/// <summary>
/// A limit you change while calls run on it (from configuration, an admin endpoint, a feature flag): see
/// <see cref="ConcurrencyLimit.Settable"/>.
/// </summary>
/// <remarks>
/// Raising it starts waiting work at once: waiters are granted the new room, and every call on the limit keeps one worker
/// waiting for a rise. Lowering it stops nothing: running items finish, workers give back the permits above the new limit as
/// they do, and no permit is granted until <see cref="ConcurrencyLimit.InFlight"/> is below it (a worker that kept its
/// permit for its next item just before the change starts that item on it: no more permits are out than before, and it
/// gives the permit back after). Each change is recorded on the
/// <c>fanout.limit.current</c> gauge. To follow configuration, set it from <c>IOptionsMonitor&lt;T&gt;.OnChange</c>:
/// <code>
/// var limit = ConcurrencyLimit.Settable(monitor.CurrentValue.MaxConcurrency);
/// using var subscription = monitor.OnChange(o => limit.Set(o.MaxConcurrency));
/// </code>
/// </remarks>
public sealed class SettableConcurrencyLimit : ConcurrencyLimit
{
    private int _limit;
    private int _peak;

    internal SettableConcurrencyLimit(int limit)
        : base(LimitTraits.RisesUnprompted) // it can rise at any time with nothing completing: each call keeps a worker waiting for the new room
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(limit, 1);
        _limit = limit;
        _peak = limit;
    }

    /// <summary>The limit as last set.</summary>
    public override int Current => Volatile.Read(ref _limit);

    /// <summary>The highest value the limit has been set to.</summary>
    public override int Peak => Volatile.Read(ref _peak);

    /// <summary>Unknown in advance: stream buffers are sized as for an unbounded limit.</summary>
    public override int MaxCurrent => int.MaxValue;

    /// <inheritdoc/>
    /// <value><c>settable</c>.</value>
    public override string Kind => "settable";

    /// <summary>Synchronous bodies gain nothing from more workers than cores, whatever the limit allows asynchronous ones.</summary>
    internal override int WorkerHint => Math.Min(Current, Environment.ProcessorCount);

    /// <summary>Changes the limit; calls running on it follow at once (see the remarks on <see cref="SettableConcurrencyLimit"/>).</summary>
    /// <param name="limit">The new limit, at least 1.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="limit"/> is less than 1.</exception>
    public void Set(int limit)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(limit, 1);
        if (Interlocked.Exchange(ref _limit, limit) == limit)
        {
            return;
        }

        InterlockedMax.Raise(ref _peak, limit);
        OnCurrentChanged();
    }
}
