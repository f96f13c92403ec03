namespace FanOut.Sources;

/// <summary>
/// Claims items of an indexed source (array, <see cref="IList{T}"/>, <see cref="IReadOnlyList{T}"/>) without a lock: a
/// worker reserves a run of consecutive indices with one interlocked add and then takes them one by one.
/// </summary>
/// <remarks>
/// Reserving runs removes the contended interlocked per item and keeps two workers from writing results into the same
/// cache line (false sharing). Runs are guided, as in OpenMP: <c>remaining / (4 x workers)</c>, at most
/// <see cref="ItemSource{T}.MaxChunk"/> and the worker's <see cref="WorkerSlot{T}.ChunkSize"/> (which stays 1 while bodies
/// go asynchronous), so they shrink to single items at the tail. A reserved run is never hostage to its owner: the owner
/// takes each index with an uncontended compare-and-swap on its own <see cref="WorkerSlot{T}.Range"/>, and a worker that
/// finds the shared counter exhausted steals the back half of another worker's run (work stealing), so a body that blocks,
/// even one waiting for a later item of its own run, never strands the items behind it. The count is read once, at the start.
/// </remarks>
internal abstract class IndexedSource<T>(int count) : ItemSource<T>
{
    private static readonly int s_workers = Environment.ProcessorCount;

    /// <summary>Guards only the growth of <see cref="_slots"/> (once per worker, never per item).</summary>
    private readonly Lock _registerLock = new();

    /// <summary>Every worker of the run, for stealing; replaced, never mutated in place, so readers need no lock.</summary>
    private WorkerSlot<T>[] _slots = [];

    private int _next;

    public override int KnownCount => count;

    public override bool ClaimNeverWaits => true;

    public override long ClaimedCount => Math.Min(Volatile.Read(ref _next), count);

    public override void Register(WorkerSlot<T> slot)
    {
        lock (_registerLock)
        {
            var grown = new WorkerSlot<T>[_slots.Length + 1];
            _slots.CopyTo(grown, 0);
            grown[^1] = slot;
            Volatile.Write(ref _slots, grown);
        }
    }

    public override ValueTask<bool> TryClaimAsync(WorkerSlot<T> slot, CancellationToken cancellationToken)
    {
        if (!TakeOwn(slot) && !Reserve(slot) && !Steal(slot))
        {
            return new ValueTask<bool>(false);
        }

        slot.Item = this[(int)slot.Index];
        return new ValueTask<bool>(true);
    }

    protected abstract T this[int index] { get; }

    private static long Pack(int next, int end) => ((long)next << 32) | (uint)end;

    private static int NextOf(long range) => (int)(range >> 32);

    private static int EndOf(long range) => (int)range;

    private static bool TakeOwn(WorkerSlot<T> slot)
    {
        var range = Volatile.Read(ref slot.Range);
        while (NextOf(range) < EndOf(range))
        {
            var seen = Interlocked.CompareExchange(ref slot.Range, Pack(NextOf(range) + 1, EndOf(range)), range);
            if (seen == range)
            {
                slot.Index = NextOf(range);
                return true;
            }

            range = seen; // a thief took the back of the run
        }

        return false;
    }

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

        // Our own run is empty here, so no thief touches it: publish the rest of the new run and take its first index.
        Volatile.Write(ref slot.Range, Pack(start + 1, Math.Min(end, count)));
        slot.Index = start;
        return true;
    }

    private bool Steal(WorkerSlot<T> thief)
    {
        foreach (var victim in Volatile.Read(ref _slots))
        {
            if (ReferenceEquals(victim, thief))
            {
                continue;
            }

            var range = Volatile.Read(ref victim.Range);
            while (NextOf(range) < EndOf(range))
            {
                // Take the back half (at least one index): the owner keeps the front, which it takes next anyway.
                var next = NextOf(range);
                var end = EndOf(range);
                var split = end - ((end - next + 1) / 2);
                var seen = Interlocked.CompareExchange(ref victim.Range, Pack(next, split), range);
                if (seen == range)
                {
                    Volatile.Write(ref thief.Range, Pack(split + 1, end));
                    thief.Index = split;
                    return true;
                }

                range = seen;
            }
        }

        return false;
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
