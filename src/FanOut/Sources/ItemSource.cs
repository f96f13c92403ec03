namespace FanOut.Sources;

/// <summary>Where the workers of one call claim their next item. Exactly once per item; indices count from 0 in source order.</summary>
internal abstract class ItemSource<T>
{
    /// <summary>How many items there are, when known before enumerating (lists and arrays); otherwise -1.</summary>
    public virtual int KnownCount => -1;

    /// <summary>Largest run of consecutive indices a worker may reserve at once (1: claim one at a time).</summary>
    public int MaxChunk { get; set; } = 1;

    /// <summary>How many items were claimed; once the run is over, the number of items.</summary>
    public abstract int ClaimedCount { get; }

    /// <summary>Claims the next item into <paramref name="slot"/>; false when the source is exhausted (or the run is canceled).</summary>
    /// <exception cref="Exception">Whatever GetEnumerator or MoveNext(Async) threw: the run faults with it.</exception>
    public abstract ValueTask<bool> TryClaimAsync(WorkerSlot<T> slot, CancellationToken cancellationToken);

    /// <summary>Disposes the enumerator, if one was created. Called once, after every worker has stopped.</summary>
    public virtual ValueTask DisposeAsync() => default;

    public static ItemSource<T> From(IEnumerable<T> source) => source switch
    {
        T[] array => new ArraySource<T>(array),
        IList<T> list => new ListSource<T>(list),
        IReadOnlyList<T> list => new ReadOnlyListSource<T>(list),
        _ => new EnumerableSource<T>(source),
    };
}

/// <summary>A worker's claimed item: written by <see cref="ItemSource{T}.TryClaimAsync"/>, which may complete asynchronously.</summary>
internal sealed class WorkerSlot<T>
{
    public T Item = default!;
    public int Index;

    /// <summary>Per-worker state of the run's subclass (a stream's batch of results).</summary>
    public object? State;

    /// <summary>Next index of the run of indices this worker reserved (indexed sources); equal to <see cref="ChunkEnd"/> when none is left.</summary>
    public int ChunkNext;

    /// <summary>End (exclusive) of the reserved run of indices.</summary>
    public int ChunkEnd;

    /// <summary>
    /// Size of the next run of indices to reserve: doubles after each body that completed synchronously, back to 1 after
    /// one that went asynchronous, so a pending body never holds more than the rest of one short run hostage.
    /// </summary>
    public int ChunkSize = 1;

    /// <summary>True while the worker holds reserved indices it has not run: it must not retire before running them.</summary>
    public bool HasReserved => ChunkNext < ChunkEnd;
}
