namespace FanOut.Sources;

/// <summary>Where the workers of one call claim their next item. Exactly once per item; indices count from 0 in source order.</summary>
internal abstract class ItemSource<T>
{
    /// <summary>How many items there are, when known before enumerating (lists and arrays); otherwise -1.</summary>
    public virtual int KnownCount => -1;

    /// <summary>
    /// The most items a claim may reach; the claim past it fails the run with an <see cref="InvalidOperationException"/>
    /// (a call that collects results in one array cannot hold more than <see cref="Array.MaxLength"/>).
    /// </summary>
    public long MaxCount { get; set; } = long.MaxValue;

    /// <summary>
    /// True when a claim never waits (an array or list read by index): a worker may then keep its permit from one item to
    /// the next, because the gap between two bodies is a few instructions, not a wait for the source.
    /// </summary>
    public virtual bool ClaimNeverWaits => false;

    /// <summary>The index of the first item (0, except for tests that start a source near <see cref="int.MaxValue"/>).</summary>
    public virtual long FirstIndex => 0;

    /// <summary>How many items were claimed; once the run is over, the number of items.</summary>
    public abstract long ClaimedCount { get; }

    /// <summary>Claims the next item into <paramref name="slot"/>; false when the source is exhausted (or the run is canceled).</summary>
    /// <exception cref="Exception">Whatever GetEnumerator or MoveNext(Async) threw: the run faults with it.</exception>
    public abstract ValueTask<bool> TryClaimAsync(WorkerSlot<T> slot, CancellationToken cancellationToken);

    /// <summary>
    /// True when a claim runs to its end on the calling thread (an array, a list, an enumerator's MoveNext under a lock):
    /// <see cref="TryClaim"/> then claims, and a worker takes its permit before it claims.
    /// </summary>
    public virtual bool ClaimsSynchronously => ClaimNeverWaits;

    /// <summary>Claims the next item on the calling thread; only sources whose <see cref="ClaimsSynchronously"/> is true implement it.</summary>
    public virtual bool TryClaim(WorkerSlot<T> slot) => throw new NotSupportedException();

    /// <summary>Disposes the enumerator, if one was created. Called once, after every worker has stopped.</summary>
    public virtual ValueTask DisposeAsync() => default;

    public static ItemSource<T> From(IEnumerable<T> source) => source switch
    {
        T[] array => new ArraySource<T>(array),
        IList<T> list => new ListSource<T>(list),
        IReadOnlyList<T> list => new ReadOnlyListSource<T>(list),
        _ => new EnumerableSource<T>(source),
    };

    /// <summary>The error of a claim past <see cref="MaxCount"/>.</summary>
    protected InvalidOperationException TooManyItems() =>
        new($"The source has more than {MaxCount:N0} items, the most one array of results can hold; use FanOutStream or the overload without results.");
}
