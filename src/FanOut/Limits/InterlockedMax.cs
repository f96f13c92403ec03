namespace FanOut;

/// <summary>Raises a shared maximum without a lock (peaks, lower bounds); linked into FanOut.Redis as well.</summary>
internal static class InterlockedMax
{
    /// <summary>Sets <paramref name="location"/> to <paramref name="value"/> if that is higher, atomically.</summary>
    public static void Raise(ref int location, int value)
    {
        var seen = Volatile.Read(ref location);
        while (value > seen)
        {
            var previous = Interlocked.CompareExchange(ref location, value, seen);
            if (previous == seen)
            {
                return;
            }

            seen = previous;
        }
    }
}
