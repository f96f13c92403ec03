using BenchmarkDotNet.Attributes;

using FanOut.Lab.Measurement;
using FanOut.Lab.Strategies;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Benchmarks;

/// <summary>
/// The lab's claim that its probes and sampler cost under 1% of a case's time: the same CPU-bound
/// fan-out, bare (baseline) and measured the way the lab measures a run (in-flight probe around every
/// item, the 1 ms sampler thread running, counters read before and after), and measured with the heartbeat as well
/// (a thread-pool work item every 10 ms and a 10 ms timer, which compete with the workers for the pool).
/// </summary>
/// <remarks>CPU-bound on purpose: waiting work hides any overhead, while here the sampler thread competes
/// with the workers for the same two cores. Total work is fixed at 64M loop iterations per operation,
/// split into many tiny items or a few large ones, so the per-item probe cost shows in the first.</remarks>
[MemoryDiagnoser]
public class MeasurementOverheadBenchmarks
{
    private const long TotalIterations = 64_000_000;
    private static long s_sink;
    private int[] _items = [];
    private SumLoopWorkload _workload = null!;
    private ParallelForEachAsyncStrategy _strategy = null!;
    private RuntimeSampler _sampler = null!;
    private RunRecorder _recorder = null!;
    private HeartbeatProbe _heartbeat = null!;
    private RunRecorder _heartbeatRecorder = null!;
    private Func<int, CancellationToken, ValueTask> _bareBody = null!;

    /// <summary>Iterations per item: 1,000 (64,000 items of ~1 us) or 1,000,000 (64 items of ~1 ms).</summary>
    [Params(1_000, 1_000_000)]
    public int WorkCount { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _items = Enumerable.Range(0, (int)(TotalIterations / WorkCount)).ToArray();
        _workload = new SumLoopWorkload(WorkCount);
        _strategy = new ParallelForEachAsyncStrategy();
        _sampler = new RuntimeSampler();
        _recorder = new RunRecorder(_sampler, _workload.Probe);
        _heartbeat = new HeartbeatProbe();
        _heartbeatRecorder = new RunRecorder(_sampler, _workload.Probe, heartbeat: _heartbeat);

        // One delegate for the whole benchmark, as the lab's method group is: only the measurement differs.
        var work = WorkCount;
        _bareBody = (_, _) =>
        {
            Volatile.Write(ref s_sink, SumLoopWorkload.Sum(work));
            return ValueTask.CompletedTask;
        };
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _heartbeat.Dispose();
        _sampler.Dispose();
    }

    [Benchmark(Baseline = true, Description = "Bare Parallel.ForEachAsync")]
    public Task Bare() => Parallel.ForEachAsync(_items, _bareBody);

    [Benchmark(Description = "Measured as a lab run")]
    public async Task<RunMetrics> Measured()
    {
        _recorder.Start();
        await _strategy.RunAsync(_workload, _items, CancellationToken.None);
        return _recorder.Stop();
    }

    [Benchmark(Description = "Measured, with heartbeat")]
    public async Task<RunMetrics> MeasuredWithHeartbeat()
    {
        _heartbeatRecorder.Start();
        await _strategy.RunAsync(_workload, _items, CancellationToken.None);
        return _heartbeatRecorder.Stop();
    }
}
