namespace FanOut.Diagnostics;

/// <summary>
/// The limits in use while a session watches limit states (<c>fanout watch</c>): each interval it publishes one
/// <c>LimitState</c> per limit, then <c>LimitsWatched</c>. It holds limits weakly and drops one idle for
/// <see cref="FanOutEvents.IdleIntervalsBeforeDropped"/> intervals, so it holds no more than the limits in use lately;
/// nothing is kept, and no limit registers, while nobody watches.
/// </summary>
internal static class WatchedLimits
{
    private static readonly Lock s_lock = new();
    private static readonly List<Watched> s_limits = [];
    private static long s_lastId;
    private static ITimer? s_timer;
    private static int s_publishing;

    /// <summary>The next limit id (taken by a limit the first time a session sees it or it changes, so ids stay small).</summary>
    public static long NextId() => Interlocked.Increment(ref s_lastId);

    /// <summary>Registers <paramref name="limit"/> (called by a limit in use while <see cref="FanOutEventSource.IsWatching"/>).</summary>
    public static void Track(ConcurrencyLimit limit)
    {
        lock (s_lock)
        {
            if (s_timer is null || !limit.TryBeginWatch())
            {
                return;
            }

            s_limits.Add(new Watched(new WeakReference<ConcurrencyLimit>(limit)));
        }
    }

    /// <summary>Publishes at once, then every <paramref name="interval"/> (a session asked for limit states).</summary>
    public static void Start(FanOutEventSource events, TimeSpan interval)
    {
        lock (s_lock)
        {
            s_timer?.Dispose();
            s_timer = TimeProvider.System.CreateTimer(static state => Publish((FanOutEventSource)state!), events, TimeSpan.Zero, interval);
            Interval = interval;
        }
    }

    /// <summary>Stops publishing and forgets every limit (the last session stopped asking).</summary>
    public static void Stop()
    {
        lock (s_lock)
        {
            s_timer?.Dispose();
            s_timer = null;
            foreach (var watched in s_limits)
            {
                if (watched.Limit.TryGetTarget(out var limit))
                {
                    limit.EndWatch();
                }
            }

            s_limits.Clear();
        }
    }

    /// <summary>The interval of the session that started last.</summary>
    internal static TimeSpan Interval { get; private set; } = FanOutEvents.DefaultStateInterval;

    /// <summary>One interval: reads every limit (outside the registry's lock: a limit reads under its own), publishes, drops the idle.</summary>
    private static void Publish(FanOutEventSource events)
    {
        if (Interlocked.Exchange(ref s_publishing, 1) != 0)
        {
            return; // the previous interval is still publishing (a slow listener): skip this one rather than pile up.
        }

        try
        {
            Watched[] watched;
            lock (s_lock)
            {
                watched = [.. s_limits];
            }

            var published = 0;
            foreach (var entry in watched)
            {
                if (!entry.Limit.TryGetTarget(out var limit))
                {
                    continue;
                }

                var reading = limit.ReadState();
                entry.Idle = reading.InFlight == 0 && reading.Waiting == 0 && reading.Changes == entry.LastChanges ? entry.Idle + 1 : 0;
                entry.LastChanges = reading.Changes;
                events.LimitState(limit.WatchId, limit.Kind, limit.Name ?? limit.Kind, reading.Limit, reading.InFlight, reading.Waiting,
                    reading.LatencyMs, reading.BaselineMs, reading.Overloads, reading.Pauses, reading.Changes);
                published++;
            }

            lock (s_lock)
            {
                s_limits.RemoveAll(static entry =>
                {
                    var alive = entry.Limit.TryGetTarget(out var limit);
                    if (alive && entry.Idle < FanOutEvents.IdleIntervalsBeforeDropped)
                    {
                        return false;
                    }

                    limit?.EndWatch();
                    return true;
                });
            }

            events.LimitsWatched(published, Interval.TotalSeconds);
        }
        finally
        {
            Volatile.Write(ref s_publishing, 0);
        }
    }

    /// <summary>A registered limit and how many intervals in a row it was idle (written by the publishing interval only).</summary>
    private sealed class Watched(WeakReference<ConcurrencyLimit> limit)
    {
        public WeakReference<ConcurrencyLimit> Limit { get; } = limit;

        public int Idle { get; set; }

        public long LastChanges { get; set; } = -1;
    }
}
