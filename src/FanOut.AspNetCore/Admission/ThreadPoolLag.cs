namespace FanOut.AspNetCore.Admission;

/// <summary>
/// How long work waits in this process's thread pool before it runs. Kestrel reads a request on the pool before the
/// admission sees it, so a pool that lags is a queue in front of the admission that no service time shows (a service
/// whose own CPU is the bottleneck: its requests' work holds the pool's threads).
/// </summary>
/// <remarks>
/// Every <see cref="Interval"/> a timer queues one probe (never a second while one waits) and the probe records how long it
/// waited; <see cref="Current"/> is that wait, or the age of a probe still waiting when that is longer. A pool that never
/// gets to the probe reads as lagging more and more, which is what it is.
/// </remarks>
internal sealed class ThreadPoolLag : IThreadPoolWorkItem, IDisposable
{
    /// <summary>The spacing of the probes: a hundred small work items a second.</summary>
    internal static readonly TimeSpan Interval = TimeSpan.FromMilliseconds(10);

    /// <summary>No probe waiting.</summary>
    private const long None = long.MinValue;

    private readonly TimeProvider _time;
    private readonly Action<IThreadPoolWorkItem> _queue;
    private readonly ITimer _timer;

    /// <summary>When the waiting probe was queued, in timestamp ticks (<see cref="None"/>: none waits).</summary>
    private long _queuedAt = None;

    /// <summary>How long the last probe waited, in timestamp ticks.</summary>
    private long _lastWait;

    /// <summary>Starts probing on <paramref name="time"/>'s timer; <paramref name="queue"/> stands in for the thread pool in tests.</summary>
    public ThreadPoolLag(TimeProvider time, Action<IThreadPoolWorkItem>? queue = null)
    {
        _time = time;
        _queue = queue ?? (static item => ThreadPool.UnsafeQueueUserWorkItem(item, preferLocal: false));
        _timer = time.CreateTimer(static state => ((ThreadPoolLag)state!).Probe(), this, Interval, Interval);
    }

    /// <summary>The pool's lag now: the last probe's wait, or the age of the probe still waiting if that is longer.</summary>
    public TimeSpan Current
    {
        get
        {
            var queuedAt = Volatile.Read(ref _queuedAt);
            var waiting = queuedAt == None ? 0 : _time.GetTimestamp() - queuedAt;
            return TimeSpan.FromSeconds((double)Math.Max(waiting, Volatile.Read(ref _lastWait)) / _time.TimestampFrequency);
        }
    }

    /// <summary>Queues a probe unless one still waits.</summary>
    internal void Probe()
    {
        if (Interlocked.CompareExchange(ref _queuedAt, _time.GetTimestamp(), None) == None)
        {
            _queue(this);
        }
    }

    /// <summary>The probe ran: records how long it waited.</summary>
    void IThreadPoolWorkItem.Execute()
    {
        Volatile.Write(ref _lastWait, _time.GetTimestamp() - Volatile.Read(ref _queuedAt));
        Volatile.Write(ref _queuedAt, None);
    }

    /// <summary>Stops the probes.</summary>
    public void Dispose() => _timer.Dispose();
}
