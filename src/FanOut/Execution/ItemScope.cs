namespace FanOut.Execution;

/// <summary>
/// The item a worker runs, as code inside its body sees it through the async flow: the limit whose permit the item holds,
/// and the attempts left to it. Nested use of the same limit (an <c>AsRateLimiter()</c> lease, FanOut.Http's handler, an
/// inner fan-out call) reuses that permit instead of waiting for a second one, and every layer's re-runs of the item draw on
/// one attempt budget.
/// </summary>
/// <remarks>
/// <para>
/// One scope per worker, set once in the worker's flow when it starts (an <see cref="AsyncLocal{T}"/> write costs an
/// ExecutionContext per worker, never per item). Between items the scope is not <see cref="IsLending"/>: code that outlives
/// its item's body (a task the body did not await) finds no permit to reuse and takes its own.
/// </para>
/// <para>
/// Lending is shared, not exclusive: every nested acquisition of the item's limit while its body runs reuses the item's
/// permit, so a body never waits for a permit of the limit it already holds one of (waiting could deadlock once the items hold
/// every permit). The limit bounds items in flight; what one item's body does under its permit is that body's own concurrency.
/// </para>
/// </remarks>
internal abstract class ItemScope
{
    private static readonly AsyncLocal<ItemScope?> s_current = new();

    /// <summary>Nested acquisitions holding the item's permit right now.</summary>
    private int _lends;

    /// <summary>Re-runs the item may still have, across every layer (the run's re-runs, a handler's re-sends).</summary>
    private int _retriesLeft;

    /// <summary>The limit whose permit the item holds while its body runs; set by the worker.</summary>
    internal ConcurrencyLimit? Limit { get; set; }

    /// <summary>True while the item's body runs under a permit of <see cref="Limit"/>: nested use may reuse it.</summary>
    internal bool IsLending { get; private set; }

    /// <summary>True once a nested lease of the item said the downstream was overloaded (the item's verdict includes it).</summary>
    internal bool NestedOverload { get; set; }

    /// <summary>The scope of the item whose body the calling code runs in, if any.</summary>
    internal static ItemScope? Current => s_current.Value;

    /// <summary>Nested acquisitions holding the item's permit right now (for tests).</summary>
    internal int Lends => Volatile.Read(ref _lends);

    /// <summary>Makes this scope the current one for the rest of the worker's flow (bodies inherit it).</summary>
    internal void Enter() => s_current.Value = this;

    /// <summary>Starts a new item with <paramref name="retries"/> re-runs in its budget.</summary>
    internal void BeginItem(int retries) => Volatile.Write(ref _retriesLeft, retries);

    /// <summary>Opens an attempt's body to nested reuse of the item's permit.</summary>
    internal void BeginBody()
    {
        NestedOverload = false;
        IsLending = true;
    }

    /// <summary>Closes the body: nested acquisitions from now on take their own permit.</summary>
    internal void EndBody() => IsLending = false;

    /// <summary>The re-runs left, for the run to set after it took one itself.</summary>
    internal int RetriesLeft => Volatile.Read(ref _retriesLeft);

    /// <summary>Reuses the item's permit for a nested acquisition of <paramref name="limit"/>; false when it holds none of that limit.</summary>
    internal bool TryLend(ConcurrencyLimit limit)
    {
        if (!IsLending || !ReferenceEquals(Limit, limit))
        {
            return false;
        }

        Interlocked.Increment(ref _lends);
        return true;
    }

    /// <summary>Ends one nested reuse of the item's permit (the permit stays the item's).</summary>
    internal void Return() => Interlocked.Decrement(ref _lends);

    /// <summary>Takes one re-run of the item's budget; false when none is left.</summary>
    internal bool TryTakeRetry()
    {
        var left = Volatile.Read(ref _retriesLeft);
        while (left > 0)
        {
            var seen = Interlocked.CompareExchange(ref _retriesLeft, left - 1, left);
            if (seen == left)
            {
                return true;
            }

            left = seen;
        }

        return false;
    }
}
