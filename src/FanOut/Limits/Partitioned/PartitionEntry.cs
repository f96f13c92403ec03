namespace FanOut;

/// <summary>One key's limit inside a <see cref="PartitionedConcurrencyLimit{TKey}"/>, pinned while in use so it is never dropped and recreated under a holder.</summary>
/// <remarks>
/// <see cref="_pins"/> counts acquisitions in progress and permits held through this entry; -1 means dropped. Pinning and
/// dropping are one compare-and-swap each, so an entry is dropped only with nothing pinned, and a pin never lands on a dropped
/// entry (the caller then looks the key up again and finds, or creates, the live one).
/// </remarks>
internal sealed class PartitionEntry(ConcurrencyLimit limit)
{
    private const int Dropped = -1;

    private int _pins;

    internal ConcurrencyLimit Limit => limit;

    /// <summary>A new entry pinned once for its maker, so no sweep can drop it before its first use.</summary>
    internal static PartitionEntry Pinned(ConcurrencyLimit limit) => new(limit) { _pins = 1 };

    /// <summary>True once dropped: the key's live entry, if any, is another one.</summary>
    internal bool IsDropped => Volatile.Read(ref _pins) == Dropped;

    internal bool TryPin()
    {
        var pins = Volatile.Read(ref _pins);
        while (pins != Dropped)
        {
            var seen = Interlocked.CompareExchange(ref _pins, pins + 1, pins);
            if (seen == pins)
            {
                return true;
            }

            pins = seen;
        }

        return false;
    }

    internal void Unpin() => Interlocked.Decrement(ref _pins);

    /// <summary>Drops the entry if nothing pins it and its limit holds nothing; true when dropped (then remove it from the map).</summary>
    internal bool TryDrop() => limit.InFlight == 0 && Interlocked.CompareExchange(ref _pins, Dropped, 0) == 0;
}
