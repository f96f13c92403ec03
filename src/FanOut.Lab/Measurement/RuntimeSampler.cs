using System.Diagnostics;

namespace FanOut.Lab.Measurement;

/// <summary>Samples thread-pool threads, OS threads and the thread-pool queue on a dedicated thread and keeps their peaks.</summary>
/// <remarks>
/// A dedicated thread, not a pool thread, so that sampling goes on while the pool is starved (which is
/// what it must see) and never competes for the pool it measures. It allocates nothing per sample on
/// Linux; whatever it does allocate is counted in <see cref="OwnAllocatedBytes"/> so the lab can
/// subtract it from the case's allocations.
/// </remarks>
public sealed class RuntimeSampler : IDisposable
{
    private readonly TimeSpan _interval;
    private readonly HeartbeatProbe? _heartbeat;
    private readonly ThreadCounter _threads = new();
    private readonly Thread _thread;
    private readonly ManualResetEventSlim _stop = new(false);
    private readonly Lock _peaksLock = new();
    private int _peakPoolThreads;
    private int _peakProcessThreads;
    private long _peakQueue;
    private long _ownAllocatedBytes;
    private long _samples;
    private TimelineRecorder? _timeline;

    /// <summary>Starts sampling every <paramref name="interval"/> (1 ms by default).</summary>
    /// <param name="interval">The sampling period.</param>
    /// <param name="heartbeat">A heartbeat whose queued work items are left out of the queue length (they are the lab's, not the case's).</param>
    public RuntimeSampler(TimeSpan? interval = null, HeartbeatProbe? heartbeat = null)
    {
        _interval = interval ?? TimeSpan.FromMilliseconds(1);
        _heartbeat = heartbeat;
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(_interval, TimeSpan.Zero, nameof(interval));
        _thread = new Thread(Loop) { IsBackground = true, Name = "FanOut.Lab sampler", Priority = ThreadPriority.AboveNormal };
        _thread.Start();
    }

    /// <summary>Bytes the sampler thread itself allocated so far.</summary>
    public long OwnAllocatedBytes => Interlocked.Read(ref _ownAllocatedBytes);

    /// <summary>Samples taken so far.</summary>
    public long Samples => Interlocked.Read(ref _samples);

    /// <summary>Reads the process's OS threads now (also used for start and end values).</summary>
    public int ProcessThreadsNow()
    {
        lock (_peaksLock)
        {
            return _threads.Read();
        }
    }

    /// <summary>Forgets the peaks and starts new ones from a sample taken now.</summary>
    public void ResetPeaks()
    {
        lock (_peaksLock)
        {
            _peakPoolThreads = 0;
            _peakProcessThreads = 0;
            _peakQueue = 0;
            SampleLocked();
        }
    }

    /// <summary>Takes a last sample and returns the peaks since <see cref="ResetPeaks"/>.</summary>
    public (int PoolThreads, int ProcessThreads, long QueueLength) Peaks()
    {
        lock (_peaksLock)
        {
            SampleLocked();
            return (_peakPoolThreads, _peakProcessThreads, _peakQueue);
        }
    }

    /// <summary>Feeds every sample from now on to <paramref name="timeline"/> as well, starting with one taken now; null stops.</summary>
    /// <remarks>The sample taken now is the timeline's first, at the run's start: the sampler thread's next turn may come
    /// late on a loaded machine (a 20 ms run once had its first sample at 17.7 ms).</remarks>
    public void Record(TimelineRecorder? timeline)
    {
        lock (_peaksLock)
        {
            _timeline = timeline;
            if (timeline is not null)
            {
                SampleLocked();
            }
        }
    }

    /// <inheritdoc/>
    public void Dispose()
    {
        _stop.Set();
        _thread.Join();
        _stop.Dispose();
        _threads.Dispose();
    }

    private void Loop()
    {
        var allocatedAtStart = GC.GetAllocatedBytesForCurrentThread();
        while (!_stop.Wait(_interval))
        {
            lock (_peaksLock)
            {
                SampleLocked();
            }

            Interlocked.Exchange(ref _ownAllocatedBytes, GC.GetAllocatedBytesForCurrentThread() - allocatedAtStart);
        }
    }

    private void SampleLocked()
    {
        AssertInvariants();
        var poolThreads = ThreadPool.ThreadCount;
        var processThreads = _threads.Read();
        var queue = ThreadPool.PendingWorkItemCount - (_heartbeat?.Pending ?? 0);
        _peakPoolThreads = Math.Max(_peakPoolThreads, poolThreads);
        _peakProcessThreads = Math.Max(_peakProcessThreads, processThreads);
        _peakQueue = Math.Max(_peakQueue, queue);
        _timeline?.Record(Stopwatch.GetTimestamp(), poolThreads, processThreads, queue);
        Interlocked.Increment(ref _samples);
    }

    [Conditional("DEBUG")]
    private void AssertInvariants() =>
        Debug.Assert(_peakPoolThreads >= 0 && _peakProcessThreads >= 0 && _peakQueue >= 0, "peaks are never negative");
}
