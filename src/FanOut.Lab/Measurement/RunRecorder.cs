using System.Diagnostics;

namespace FanOut.Lab.Measurement;

/// <summary>Takes the counters before and after one run and turns the difference into <see cref="RunMetrics"/>.</summary>
/// <remarks>Everything here reads process-wide counters the runtime already keeps; nothing runs per item. With a
/// <paramref name="heartbeat"/>, it beats during the run, and its own work items are not counted as the run's.</remarks>
/// <param name="sampler">The 1 ms sampler.</param>
/// <param name="probe">The workload's in-flight probe.</param>
/// <param name="timeline">What a run's timeline reads besides the runtime; null records no timeline.</param>
/// <param name="heartbeat">The heartbeat that measures how late other work runs; null beats nothing.</param>
public sealed class RunRecorder(RuntimeSampler sampler, InFlightProbe probe, TimelineSources? timeline = null, HeartbeatProbe? heartbeat = null) : IDisposable
{
    private Snapshot _start;
    private long _startTimestamp;
    private TimelineRecorder? _timeline;
    private LimitDecisionRecorder? _decisions;

    /// <summary>Resets the probe and the sampler's peaks and reads the start counters; call right before the run.</summary>
    public void Start()
    {
        probe.Reset();
        sampler.ResetPeaks();

        // Allocated before the start counters are read, so the timeline's arrays are not the run's allocations.
        // The decisions' listener too: enabling the event source is not the run's cost either.
        _timeline = timeline is null ? null : new TimelineRecorder(probe, timeline);
        _decisions?.Dispose();
        _decisions = timeline?.LimitName?.Invoke() is { } limitName ? new LimitDecisionRecorder(limitName) : null;
        _start = Snapshot.Take(sampler, heartbeat);
        heartbeat?.Start();
        _startTimestamp = Stopwatch.GetTimestamp();
        _timeline?.Start(_startTimestamp);
        _decisions?.Start(_startTimestamp);
        sampler.Record(_timeline);
    }

    /// <summary>Reads the end counters; call right after the run.</summary>
    public RunMetrics Stop()
    {
        var elapsed = Stopwatch.GetElapsedTime(_startTimestamp);
        heartbeat?.Stop();
        var end = Snapshot.Take(sampler, heartbeat);
        var peaks = sampler.Peaks();
        sampler.Record(null);
        _decisions?.Stop();
        return new RunMetrics
        {
            ElapsedMs = elapsed.TotalMilliseconds,
            PeakInFlight = probe.Peak,
            ItemsStarted = probe.Started,
            ThreadPoolThreadsStart = _start.PoolThreads,
            ThreadPoolThreadsPeak = Math.Max(peaks.PoolThreads, Math.Max(_start.PoolThreads, end.PoolThreads)),
            ThreadPoolThreadsEnd = end.PoolThreads,
            ProcessThreadsStart = _start.ProcessThreads,
            ProcessThreadsPeak = Math.Max(peaks.ProcessThreads, Math.Max(_start.ProcessThreads, end.ProcessThreads)),
            ProcessThreadsEnd = end.ProcessThreads,
            PeakQueueLength = peaks.QueueLength,
            CompletedWorkItems = end.CompletedWorkItems - _start.CompletedWorkItems - (end.HeartbeatExecutions - _start.HeartbeatExecutions),
            LockContentions = end.LockContentions - _start.LockContentions,
            AllocatedBytes = Math.Max(0, end.AllocatedBytes - _start.AllocatedBytes - (end.SamplerBytes - _start.SamplerBytes)),
            Gen0 = end.Gen0 - _start.Gen0,
            Gen1 = end.Gen1 - _start.Gen1,
            Gen2 = end.Gen2 - _start.Gen2,
            CpuTimeMs = (end.CpuTime - _start.CpuTime).TotalMilliseconds,
            Timeline = _timeline?.ToTimeline(elapsed.TotalMilliseconds, _decisions),
            Heartbeat = heartbeat?.Summarize(),
        };
    }

    /// <summary>Stops listening for the limit's decisions, if a run left its listener on (a run that threw).</summary>
    public void Dispose() => _decisions?.Dispose();

    private readonly record struct Snapshot(
        int PoolThreads,
        int ProcessThreads,
        long CompletedWorkItems,
        long LockContentions,
        long AllocatedBytes,
        long SamplerBytes,
        int Gen0,
        int Gen1,
        int Gen2,
        TimeSpan CpuTime,
        long HeartbeatExecutions)
    {
        public static Snapshot Take(RuntimeSampler sampler, HeartbeatProbe? heartbeat) => new(
            ThreadPool.ThreadCount,
            sampler.ProcessThreadsNow(),
            ThreadPool.CompletedWorkItemCount,
            Monitor.LockContentionCount,
            GC.GetTotalAllocatedBytes(precise: true),
            sampler.OwnAllocatedBytes,
            GC.CollectionCount(0),
            GC.CollectionCount(1),
            GC.CollectionCount(2),
            Environment.CpuUsage.TotalTime,
            heartbeat?.Executions ?? 0);
    }
}
