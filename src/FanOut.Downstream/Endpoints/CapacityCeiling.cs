namespace FanOut.Downstream.Endpoints;

/// <summary>
/// The capacity in effect, which <see cref="DownstreamServer.SetCapacity"/> may lower (and raise back) at run time below the
/// configured <see cref="DownstreamOptions.Capacity"/>: a request that got a slot of the configured capacity is also
/// counted here, and one that finds the ceiling full is answered 429 like a request with no slot.
/// </summary>
/// <remarks>
/// The configured limiter still bounds the slots and the queue, so with a queue a request waits for a configured slot and
/// may then be turned away by a lowered ceiling; with no queue (the case the lab changes) the server simply serves at
/// most the ceiling at once. Lowering it never interrupts a request being served: the ceiling is enforced as they end.
/// </remarks>
internal sealed class CapacityCeiling(int capacity)
{
    private int _ceiling = capacity;
    private int _inside;

    /// <summary>The capacity in effect.</summary>
    public int Current => Volatile.Read(ref _ceiling);

    /// <summary>Sets the capacity in effect (1 to the configured capacity; checked by the caller).</summary>
    public void Set(int ceiling) => Volatile.Write(ref _ceiling, ceiling);

    /// <summary>Counts a request in if the ceiling has room.</summary>
    public bool TryEnter()
    {
        var inside = Volatile.Read(ref _inside);
        while (inside < Volatile.Read(ref _ceiling))
        {
            var seen = Interlocked.CompareExchange(ref _inside, inside + 1, inside);
            if (seen == inside)
            {
                return true;
            }

            inside = seen;
        }

        return false;
    }

    /// <summary>Counts a request out.</summary>
    public void Exit() => Interlocked.Decrement(ref _inside);
}
