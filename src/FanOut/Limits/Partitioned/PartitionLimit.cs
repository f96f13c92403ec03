namespace FanOut;

/// <summary>
/// The limit of one key of a <see cref="PartitionedConcurrencyLimit{TKey}"/>: a permit is the key limit's permit, then one of
/// the global pool; both are given back together. Everything a run asks of a limit (room, learning, overload) is the key
/// limit's, capped by the global pool.
/// </summary>
internal sealed class PartitionLimit<TKey> : ConcurrencyLimit
    where TKey : notnull
{
    private readonly PartitionedConcurrencyLimit<TKey> _owner;
    private readonly TKey _key;

    /// <summary>The entry this view last pinned; while any permit is held through it, it is the key's live entry.</summary>
    private PartitionEntry _entry;

    internal PartitionLimit(PartitionedConcurrencyLimit<TKey> owner, TKey key)
        : base(KeyTraits(owner, key))
    {
        _owner = owner;
        _key = key;
        _entry = owner.Pin(key);
        _entry.Unpin();
    }

    public override int Current => Math.Min(KeyLimit.Current, _owner.Current);

    public override int Peak => Math.Min(KeyLimit.Peak, _owner.Current);

    public override int MaxCurrent => Math.Min(KeyLimit.MaxCurrent, _owner.Current);

    public override int InFlight => KeyLimit.InFlight;

    public override string Kind => _owner.Kind;

    public override TimeProvider TimeProvider => KeyLimit.TimeProvider;

    /// <summary>Always: the global pool is shared by every key, so room can come from another key's finished item.</summary>
    internal override bool IsShared => true;

    internal override bool MayRiseUnprompted => KeyLimit.MayRiseUnprompted;

    internal override int WorkerHint => Math.Min(KeyLimit.WorkerHint, _owner.Current);

    internal override bool LearnsFromWork => KeyLimit.LearnsFromWork;

    internal override bool ShouldReturnPermit => KeyLimit.ShouldReturnPermit || _owner.ShouldReturnPermit;

    /// <summary>The traits of the key's limit, which this view reports as its own (a key limit made again for a dropped key is made by the same factory).</summary>
    private static LimitTraits KeyTraits(PartitionedConcurrencyLimit<TKey> owner, TKey key)
    {
        var entry = owner.Pin(key);
        try
        {
            return entry.Limit.Traits;
        }
        finally
        {
            entry.Unpin();
        }
    }

    /// <summary>The key's live limit: the entry this view last pinned while it is not dropped (no lookup on the run's hot reads), else the map's.</summary>
    private ConcurrencyLimit KeyLimit
    {
        get
        {
            var entry = Volatile.Read(ref _entry);
            return (entry.IsDropped ? _owner.Peek(_key) ?? entry : entry).Limit;
        }
    }

    public override bool IsOverload(Exception failure) => KeyLimit.IsOverload(failure);

    protected override long OnItemStarting() => KeyLimit.RecordStart();

    protected override void OnItemCompleted(long startTimestamp, ItemOutcome outcome) => KeyLimit.RecordCompletion(startTimestamp, outcome);

    protected override void OnItemCompleted(long startTimestamp, ItemOutcome outcome, TimeSpan? retryAfter) => KeyLimit.RecordCompletion(startTimestamp, outcome, retryAfter);

    protected override bool TryAcquireCore()
    {
        var entry = PinEntry();
        if (!entry.Limit.TryAcquire())
        {
            entry.Unpin();
            return false;
        }

        if (!_owner.TryAcquireGlobal())
        {
            entry.Limit.Release();
            entry.Unpin();
            return false;
        }

        return true;
    }

    protected override Task<bool> WaitAsyncCore(CancellationToken cancellationToken)
    {
        return cancellationToken.IsCancellationRequested ? Task.FromResult(false) : WaitBothAsync(PinEntry(), cancellationToken);

        async Task<bool> WaitBothAsync(PartitionEntry entry, CancellationToken cancellationToken)
        {
            var keyPermit = false;
            try
            {
                keyPermit = entry.Limit.TryAcquire() || await entry.Limit.WaitAsync(cancellationToken).ConfigureAwait(false);
                if (keyPermit && (_owner.TryAcquireGlobal() || await _owner.WaitGlobalAsync(cancellationToken).ConfigureAwait(false)))
                {
                    return true;
                }
            }
            catch
            {
                GiveBack(entry, keyPermit);
                throw;
            }

            GiveBack(entry, keyPermit);
            return false;
        }

        static void GiveBack(PartitionEntry entry, bool keyPermit)
        {
            if (keyPermit)
            {
                entry.Limit.Release();
            }

            entry.Unpin();
        }
    }

    protected override void ReleaseCore()
    {
        // Every permit held through this view pins the key's one live entry, which cannot change while it is pinned.
        var entry = Volatile.Read(ref _entry);
        _owner.ReleaseGlobal();
        entry.Limit.Release();
        entry.Unpin();
    }

    private PartitionEntry PinEntry()
    {
        var entry = Volatile.Read(ref _entry);
        if (entry.TryPin())
        {
            return entry;
        }

        entry = _owner.Pin(_key);
        Volatile.Write(ref _entry, entry);
        return entry;
    }
}
