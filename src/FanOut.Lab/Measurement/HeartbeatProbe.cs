using System.Diagnostics;

namespace FanOut.Lab.Measurement;

/// <summary>Measures how long other work waits while a fan-out runs: every 10 ms a tiny thread-pool work item (a "request
/// arriving") and a timer callback, each recording how late it ran.</summary>
/// <remarks>
/// <para>The pool heartbeats are queued by a dedicated thread, so they keep arriving while the pool is starved, which is
/// what they must see. The timer re-arms itself from its callback: its lateness is how long a due timer (a timeout, a
/// <c>Task.Delay</c>) waited for a pool thread.</para>
/// <para>Allocation-light: the work items and the lateness buffers are allocated once, here; a heartbeat allocates
/// nothing. A heartbeat still queued when the run stops is recorded as waiting until then (a lower bound).</para>
/// </remarks>
public sealed class HeartbeatProbe : IDisposable
{
    /// <summary>The default spacing of the heartbeats.</summary>
    public static readonly TimeSpan DefaultInterval = TimeSpan.FromMilliseconds(10);

    /// <summary>Heartbeats kept per kind: 16,384 at 10 ms is 2.7 minutes of run; later ones are not recorded.</summary>
    private const int DefaultCapacity = 16_384;

    private const int Queued = 0;
    private const int Claimed = 1;
    private const int Recorded = 2;

    private readonly long _intervalTicks;
    private readonly PoolBeat[] _beats;
    private readonly long[] _scheduledAt;
    private readonly int[] _state;
    private readonly double[] _poolLateMs;
    private readonly double[] _timerLateMs;
    private readonly double[] _scratch;
    private readonly Thread _thread;
    private readonly ManualResetEventSlim _running = new(false);
    private readonly ManualResetEventSlim _disposed = new(false);
    private readonly Timer _timer;
    private int _next;
    private int _runFirst;
    private int _runEnd;
    private int _timerCount;
    private long _timerDueAt;
    private long _startedAt;
    private long _executions;
    private long _poolQueued;
    private long _poolRan;
    private volatile bool _on;

    /// <summary>Creates the probe and its thread; it beats only between <see cref="Start"/> and <see cref="Stop"/>.</summary>
    /// <param name="interval">The spacing of the heartbeats (10 ms by default).</param>
    /// <param name="capacity">Heartbeats recorded per kind in one run.</param>
    public HeartbeatProbe(TimeSpan? interval = null, int capacity = DefaultCapacity)
    {
        var spacing = interval ?? DefaultInterval;
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(spacing, TimeSpan.Zero, nameof(interval));
        ArgumentOutOfRangeException.ThrowIfLessThan(capacity, 1);
        Interval = spacing;
        _intervalTicks = (long)(spacing.TotalSeconds * Stopwatch.Frequency);
        _beats = new PoolBeat[capacity];
        for (var i = 0; i < capacity; i++)
        {
            _beats[i] = new PoolBeat(this, i);
        }

        _scheduledAt = new long[capacity];
        _state = new int[capacity];
        Array.Fill(_state, Recorded);
        _poolLateMs = new double[capacity];
        _timerLateMs = new double[capacity];
        _scratch = new double[capacity];
        _timer = new Timer(static p => ((HeartbeatProbe)p!).OnTimer(), this, Timeout.Infinite, Timeout.Infinite);
        _thread = new Thread(Loop) { IsBackground = true, Name = "FanOut.Lab heartbeat", Priority = ThreadPriority.AboveNormal };
        _thread.Start();
    }

    /// <summary>The spacing of the heartbeats.</summary>
    public TimeSpan Interval { get; }

    /// <summary>Heartbeat work items and timer callbacks that have run so far (to subtract from the pool's completed work items).</summary>
    public long Executions => Interlocked.Read(ref _executions);

    /// <summary>Timer beats recorded since <see cref="Start"/> (a loaded host may run many pool beats before the first timer beat).</summary>
    public int TimerBeatsSoFar => Volatile.Read(ref _timerCount);

    /// <summary>Pool beats that ran since the probe was made.</summary>
    public long PoolBeatsRan => Interlocked.Read(ref _poolRan);

    /// <summary>Pool heartbeats queued since the probe was made (for tests: a run's beats are those queued between its Start and Stop).</summary>
    internal long BeatsQueued => Volatile.Read(ref _next);

    /// <summary>Pool heartbeats queued and not yet run: the part of the pool's queue that is the probe's own.</summary>
    public long Pending => Math.Max(0, Interlocked.Read(ref _poolQueued) - Interlocked.Read(ref _poolRan));

    /// <summary>Starts beating; call right before the run.</summary>
    public void Start()
    {
        _runFirst = Volatile.Read(ref _next);
        _runEnd = _runFirst;
        _timerCount = 0;
        _startedAt = Stopwatch.GetTimestamp();
        Volatile.Write(ref _timerDueAt, _startedAt + _intervalTicks);
        _on = true;
        _timer.Change(Interval, Timeout.InfiniteTimeSpan);
        _running.Set();
    }

    /// <summary>Stops beating; a heartbeat still queued is recorded as late as now. Call right after the run.</summary>
    public void Stop()
    {
        _on = false;
        _running.Reset();
        _timer.Change(Timeout.Infinite, Timeout.Infinite);
        var now = Stopwatch.GetTimestamp();
        _runEnd = Volatile.Read(ref _next);
        for (var n = _runFirst; n < _runEnd; n++)
        {
            var slot = n % _beats.Length;
            if (Interlocked.CompareExchange(ref _state[slot], Claimed, Queued) == Queued)
            {
                _poolLateMs[slot] = Ms(now - _scheduledAt[slot]);
                Volatile.Write(ref _state[slot], Recorded);
            }
        }
    }

    /// <summary>The lateness of the run's heartbeats; call after <see cref="Stop"/>. Sorts in a buffer kept for it: allocates nothing.</summary>
    public HeartbeatRunMetrics Summarize() => Summarize(TimeSpan.Zero);

    /// <summary>
    /// The lateness of the heartbeats due <paramref name="skipFirst"/> or more after <see cref="Start"/>: a process's first
    /// second is its own start-up (code compiled, the pool growing), not the host's load.
    /// </summary>
    public HeartbeatRunMetrics Summarize(TimeSpan skipFirst)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(skipFirst, TimeSpan.Zero);
        var from = _startedAt + (long)(skipFirst.TotalSeconds * Stopwatch.Frequency);
        var total = Math.Min(_runEnd - _runFirst, _beats.Length);
        var count = 0;
        for (var n = 0; n < total; n++)
        {
            var slot = (_runFirst + n) % _beats.Length;

            // A heartbeat that claimed its slot just before Stop writes its lateness in a moment.
            while (Volatile.Read(ref _state[slot]) != Recorded)
            {
                Thread.SpinWait(1);
            }

            if (_scheduledAt[slot] >= from)
            {
                _scratch[count++] = _poolLateMs[slot];
            }
        }

        var pool = Percentiles(_scratch.AsSpan(0, count));

        // Timer beats are one interval apart at the earliest: the first skipFirst / Interval of them are the ones skipped.
        var timerCount = Math.Min(Volatile.Read(ref _timerCount), _timerLateMs.Length);
        var timerSkipped = (int)Math.Min(timerCount, skipFirst.Ticks / Interval.Ticks);
        _timerLateMs.AsSpan(timerSkipped, timerCount - timerSkipped).CopyTo(_scratch);
        var timer = Percentiles(_scratch.AsSpan(0, timerCount - timerSkipped));
        return new HeartbeatRunMetrics(count, pool.P50, pool.P99, pool.Max, timerCount - timerSkipped, timer.P50, timer.P99, timer.Max);
    }

    /// <inheritdoc/>
    public void Dispose()
    {
        _on = false;
        _disposed.Set();
        _running.Set();
        _thread.Join();
        _timer.Dispose();
        _running.Dispose();
        _disposed.Dispose();
    }

    private static double Ms(long ticks) => ticks * 1000.0 / Stopwatch.Frequency;

    /// <summary>Nearest-rank percentiles of <paramref name="values"/> (sorted in place); zeros when empty.</summary>
    private static (double P50, double P99, double Max) Percentiles(Span<double> values)
    {
        if (values.IsEmpty)
        {
            return (0, 0, 0);
        }

        values.Sort();
        return (values[Rank(0.50, values.Length)], values[Rank(0.99, values.Length)], values[^1]);
    }

    /// <summary>The index of the nearest-rank <paramref name="p"/> percentile among <paramref name="count"/> sorted values.</summary>
    private static int Rank(double p, int count) => Math.Clamp((int)Math.Ceiling(p * count) - 1, 0, count - 1);

    private void Loop()
    {
        while (true)
        {
            _running.Wait();
            if (_disposed.IsSet)
            {
                return;
            }

            var next = Stopwatch.GetTimestamp();
            while (_on)
            {
                Beat();
                next += _intervalTicks;
                var wait = next - Stopwatch.GetTimestamp();
                if (wait <= 0)
                {
                    // This thread was held up past the next beat: beat once, now, and keep the spacing from here (a
                    // burst of the beats missed while it waited would queue them all at once and fill the run's slots).
                    next = Stopwatch.GetTimestamp();
                }
                else if (_disposed.Wait(TimeSpan.FromSeconds((double)wait / Stopwatch.Frequency)))
                {
                    return;
                }
            }
        }
    }

    /// <summary>Queues one heartbeat, unless the run has used every slot or the slot's previous heartbeat is still queued.</summary>
    private void Beat()
    {
        var n = _next;
        if (n - _runFirst >= _beats.Length)
        {
            return;
        }

        var slot = n % _beats.Length;
        if (Volatile.Read(ref _state[slot]) != Recorded)
        {
            return;
        }

        _scheduledAt[slot] = Stopwatch.GetTimestamp();
        Volatile.Write(ref _state[slot], Queued);
        Volatile.Write(ref _next, n + 1);

        // Counted before it is queued, so a sample of the pool's queue never holds a heartbeat Pending does not.
        Interlocked.Increment(ref _poolQueued);
        ThreadPool.UnsafeQueueUserWorkItem(_beats[slot], preferLocal: false);
    }

    private void OnBeat(int slot)
    {
        var late = Ms(Stopwatch.GetTimestamp() - _scheduledAt[slot]);
        Interlocked.Increment(ref _executions);
        Interlocked.Increment(ref _poolRan);
        if (Interlocked.CompareExchange(ref _state[slot], Claimed, Queued) == Queued)
        {
            _poolLateMs[slot] = late;
            Volatile.Write(ref _state[slot], Recorded);
        }
    }

    private void OnTimer()
    {
        var now = Stopwatch.GetTimestamp();
        Interlocked.Increment(ref _executions);
        if (!_on)
        {
            return;
        }

        var n = _timerCount;
        if (n < _timerLateMs.Length)
        {
            _timerLateMs[n] = Ms(Math.Max(0, now - Volatile.Read(ref _timerDueAt)));
            Volatile.Write(ref _timerCount, n + 1);
        }

        Volatile.Write(ref _timerDueAt, now + _intervalTicks);
        _timer.Change(Interval, Timeout.InfiniteTimeSpan);
    }

    /// <summary>One preallocated heartbeat work item.</summary>
    private sealed class PoolBeat(HeartbeatProbe probe, int slot) : IThreadPoolWorkItem
    {
        public void Execute() => probe.OnBeat(slot);
    }
}
