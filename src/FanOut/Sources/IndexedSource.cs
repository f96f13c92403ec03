namespace FanOut.Sources;

/// <summary>
/// Claims items of an indexed source (array, <see cref="IList{T}"/>, <see cref="IReadOnlyList{T}"/>) without a lock: one
/// interlocked increment of a shared counter per item, so items are claimed strictly in index order, one at a time.
/// </summary>
/// <remarks>
/// Claiming one index at a time is what keeps Parallel.ForEachAsync's promises: an item is read (the indexer is user code
/// for a custom list) only when a worker can start it, and when item k starts every item before it has been claimed, so
/// a body that waits for a later item's start never waits on an index another worker reserved and has not started.
/// Nothing here grows with the workers: a worker is not registered anywhere. The count is read once, at the start.
/// </remarks>
internal abstract class IndexedSource<T>(int count) : ItemSource<T>
{
    /// <summary>The next index to claim; passes <c>count</c> by the claims made after the end (a long: they cannot wrap it).</summary>
    private long _next;

    public override int KnownCount => count;

    public override bool ClaimNeverWaits => true;

    public override long ClaimedCount => Math.Min(Volatile.Read(ref _next), count);

    public override ValueTask<bool> TryClaimAsync(WorkerSlot<T> slot, CancellationToken cancellationToken) => new(TryClaim(slot));

    /// <summary>Claims the next index into <paramref name="slot"/>; false once every index is claimed.</summary>
    public override bool TryClaim(WorkerSlot<T> slot)
    {
        // One interlocked increment and no read before it: the counter's cache line moves between the workers' cores once
        // per claim, not twice (a read, then the write's upgrade).
        var index = Interlocked.Increment(ref _next) - 1;
        if (index >= count)
        {
            return false;
        }

        slot.Index = index;
        slot.Item = this[(int)index];
        return true;
    }

    protected abstract T this[int index] { get; }
}

/// <summary>An array: elements read directly.</summary>
internal sealed class ArraySource<T>(T[] array) : IndexedSource<T>(array.Length)
{
    protected override T this[int index] => array[index];
}

/// <summary>An <see cref="IList{T}"/>.</summary>
internal sealed class ListSource<T>(IList<T> list) : IndexedSource<T>(list.Count)
{
    protected override T this[int index] => list[index];
}

/// <summary>An <see cref="IReadOnlyList{T}"/>.</summary>
internal sealed class ReadOnlyListSource<T>(IReadOnlyList<T> list) : IndexedSource<T>(list.Count)
{
    protected override T this[int index] => list[index];
}
