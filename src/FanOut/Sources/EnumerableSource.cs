namespace FanOut.Sources;

/// <summary>
/// Claims items of a general <see cref="IEnumerable{T}"/>: an enumerator is single-threaded, so claims take turns on a lock.
/// </summary>
/// <remarks>
/// MoveNext is user code, and it runs under <see cref="_gate"/>: that is the serialization an enumerator needs, and the gate
/// guards nothing else, so no other lock can ever be held inside it (the same design as Parallel.ForEachAsync).
/// The enumerator is created by the first claim, on a worker, so a throwing GetEnumerator faults the task instead of the caller.
/// </remarks>
/// <param name="source">The items.</param>
/// <param name="firstIndex">The index of the first item: 0, except in tests that start near <see cref="int.MaxValue"/>.</param>
internal sealed class EnumerableSource<T>(IEnumerable<T> source, long firstIndex = 0) : ItemSource<T>
{
    private readonly Lock _gate = new();
    private IEnumerator<T>? _enumerator;
    private readonly long _firstIndex = firstIndex;
    private long _claimed = firstIndex;
    private bool _done;

    public override long FirstIndex => _firstIndex;

    public override long ClaimedCount => Volatile.Read(ref _claimed);

    public override bool ClaimsSynchronously => true;

    public override ValueTask<bool> TryClaimAsync(WorkerSlot<T> slot, CancellationToken cancellationToken) => new(TryClaim(slot));

    public override bool TryClaim(WorkerSlot<T> slot)
    {
        lock (_gate)
        {
            if (_done)
            {
                return false;
            }

            try
            {
                _enumerator ??= source.GetEnumerator() ?? throw new InvalidOperationException("The source's GetEnumerator() returned null.");
                if (!_enumerator.MoveNext())
                {
                    _done = true;
                    return false;
                }

                if (_claimed >= MaxCount)
                {
                    throw TooManyItems();
                }

                slot.Item = _enumerator.Current;
            }
            catch
            {
                _done = true; // an enumerator that threw is not asked again
                throw;
            }

            slot.Index = _claimed;
            Volatile.Write(ref _claimed, _claimed + 1);
            return true;
        }
    }

    public override ValueTask DisposeAsync()
    {
        // Every worker has stopped: nobody else touches the enumerator now.
        _enumerator?.Dispose();
        return default;
    }
}
