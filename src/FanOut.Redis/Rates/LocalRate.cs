namespace FanOut.Redis.Rates;

/// <summary>
/// The fallback of <see cref="RedisRateLimiter"/> while Redis is unreachable: the same GCRA as <see cref="RateScripts"/>,
/// in this process, on the options' clock, at a rate that may change between calls (the share last known).
/// </summary>
internal sealed class LocalRate(TimeProvider time)
{
    private readonly Lock _lock = new();

    /// <summary>The theoretical arrival time: when the local bucket is full again (a timestamp of <c>time</c>).</summary>
    private long _tat;

    /// <summary>
    /// Books <paramref name="permits"/> at <paramref name="perWindow"/> per <paramref name="window"/> with bursts of
    /// <paramref name="burst"/>; returns how long until they are the caller's (zero: now). A booking is never refused: the
    /// caller waits for it, and waiters queue in time as they do on Redis.
    /// </summary>
    public TimeSpan Reserve(int permits, int perWindow, int burst, TimeSpan window)
    {
        // Whole timestamp ticks, rounded against the caller: a timestamp near 2^60 has no room for a double's fractions.
        var interval = window.TotalSeconds * time.TimestampFrequency / perWindow;
        var step = (long)Math.Ceiling(permits * interval);
        var allowance = (long)Math.Floor(burst * interval);
        lock (_lock)
        {
            var now = time.GetTimestamp();
            _tat = Math.Max(_tat, now) + step;
            var wait = _tat - allowance - now;

            // Rounded up to whole TimeSpan ticks, never early; RateWait turns it into the timer's whole milliseconds.
            return wait <= 0 ? TimeSpan.Zero : TimeSpan.FromTicks((long)Math.Ceiling(wait * (double)TimeSpan.TicksPerSecond / time.TimestampFrequency));
        }
    }
}
