namespace FanOut.Sources;

/// <summary>Claims array elements with one interlocked increment: no lock, no enumerator, no allocation per item.</summary>
internal sealed class ArraySource<T>(T[] array) : ItemSource<T>
{
    private int _next = -1;

    public override int KnownCount => array.Length;

    public override int ClaimedCount => Math.Min(Volatile.Read(ref _next) + 1, array.Length);

    public override ValueTask<bool> TryClaimAsync(WorkerSlot<T> slot, CancellationToken cancellationToken)
    {
        var index = Interlocked.Increment(ref _next);
        if ((uint)index >= (uint)array.Length)
        {
            // Pin the counter at the end so that workers polling an exhausted source cannot overflow it.
            Volatile.Write(ref _next, array.Length);
            return new ValueTask<bool>(false);
        }

        slot.Item = array[index];
        slot.Index = index;
        return new ValueTask<bool>(true);
    }
}
