namespace FanOut.Sources;

/// <summary>Claims <see cref="IList{T}"/> elements by index with one interlocked increment; the count is read once, at the start.</summary>
internal sealed class ListSource<T>(IList<T> list) : ItemSource<T>
{
    private readonly int _count = list.Count;
    private int _next = -1;

    public override int KnownCount => _count;

    public override int ClaimedCount => Math.Min(Volatile.Read(ref _next) + 1, _count);

    public override ValueTask<bool> TryClaimAsync(WorkerSlot<T> slot, CancellationToken cancellationToken)
    {
        var index = Interlocked.Increment(ref _next);
        if ((uint)index >= (uint)_count)
        {
            Volatile.Write(ref _next, _count);
            return new ValueTask<bool>(false);
        }

        slot.Item = list[index];
        slot.Index = index;
        return new ValueTask<bool>(true);
    }
}

/// <summary>Claims <see cref="IReadOnlyList{T}"/> elements by index with one interlocked increment.</summary>
internal sealed class ReadOnlyListSource<T>(IReadOnlyList<T> list) : ItemSource<T>
{
    private readonly int _count = list.Count;
    private int _next = -1;

    public override int KnownCount => _count;

    public override int ClaimedCount => Math.Min(Volatile.Read(ref _next) + 1, _count);

    public override ValueTask<bool> TryClaimAsync(WorkerSlot<T> slot, CancellationToken cancellationToken)
    {
        var index = Interlocked.Increment(ref _next);
        if ((uint)index >= (uint)_count)
        {
            Volatile.Write(ref _next, _count);
            return new ValueTask<bool>(false);
        }

        slot.Item = list[index];
        slot.Index = index;
        return new ValueTask<bool>(true);
    }
}
