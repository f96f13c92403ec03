namespace FanOut.Sources;

/// <summary>
/// Claims items of an indexed source (array, <see cref="IList{T}"/>, <see cref="IReadOnlyList{T}"/>) without a lock: a
/// worker reserves a run of consecutive indices with one interlocked add and then takes them one by one.
/// </summary>
/// <remarks>
/// Reserving runs removes the contended interlocked per item and keeps two workers from writing results into the same
/// cache line (false sharing). Runs are guided, as in OpenMP: <c>remaining / (4 x workers)</c>, at most
/// <see cref="ItemSource{T}.MaxChunk"/> and the worker's <see cref="WorkerSlot{T}.ChunkSize"/> (which stays 1 while bodies
/// go asynchronous), so they shrink to single items at the tail and no worker is left with a long run while the others
/// idle. The count is read once, at the start.
/// </remarks>
internal abstract class IndexedSource<T>(int count) : ItemSource<T>
{
    private static readonly int s_workers = Environment.ProcessorCount;
    private int _next;

    public override int KnownCount => count;

    public override int ClaimedCount => Math.Min(Volatile.Read(ref _next), count);

    public override ValueTask<bool> TryClaimAsync(WorkerSlot<T> slot, CancellationToken cancellationToken)
    {
        if (slot.ChunkNext >= slot.ChunkEnd && !Reserve(slot))
        {
            return new ValueTask<bool>(false);
        }

        var index = slot.ChunkNext++;
        slot.Item = this[index];
        slot.Index = index;
        return new ValueTask<bool>(true);
    }

    protected abstract T this[int index] { get; }

    private bool Reserve(WorkerSlot<T> slot)
    {
        var seen = Volatile.Read(ref _next);
        if (seen >= count)
        {
            return false; // exhausted: don't push the counter further (no overflow however long workers poll)
        }

        var size = Math.Clamp((count - seen) / (4 * s_workers), 1, Math.Min(MaxChunk, slot.ChunkSize));
        var end = Interlocked.Add(ref _next, size);
        var start = end - size;
        if (start >= count)
        {
            return false;
        }

        slot.ChunkNext = start;
        slot.ChunkEnd = Math.Min(end, count);
        return true;
    }
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
