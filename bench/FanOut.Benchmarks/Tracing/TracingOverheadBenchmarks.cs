using System.Diagnostics;

using BenchmarkDotNet.Attributes;

using FanOut.Diagnostics;

namespace FanOut.Benchmarks.Tracing;

/// <summary>
/// Issue 20 item 7: what tracing costs per item. A synchronously completing body over an <c>int[]</c> of 1,000,000 items at
/// <see cref="Environment.ProcessorCount"/> in flight (the per-item overhead benchmark's workload), with no listener (the
/// baseline: what every user without OpenTelemetry pays), with a listener on the "FanOut" source that samples nothing, and
/// with one that records everything. Times are per item (OperationsPerInvoke).
/// </summary>
public class TracingOverheadBenchmarks
{
    internal const int Items = 1_000_000;
    private readonly int[] _items = Enumerable.Range(0, Items).ToArray();
    private ActivityListener? _listener;

    [GlobalSetup(Targets = [nameof(ListenerNotSampling)])]
    public void AttachNonSampling() => _listener = TracingListeners.Attach(ActivitySamplingResult.None);

    [GlobalSetup(Targets = [nameof(ListenerRecordingAll)])]
    public void AttachRecording() => _listener = TracingListeners.Attach(ActivitySamplingResult.AllDataAndRecorded);

    [GlobalCleanup]
    public void Detach() => _listener?.Dispose();

    [Benchmark(Baseline = true, OperationsPerInvoke = Items)]
    public Task NoListener() => TracingListeners.Run(_items);

    [Benchmark(OperationsPerInvoke = Items)]
    public Task ListenerNotSampling() => TracingListeners.Run(_items);

    [Benchmark(OperationsPerInvoke = Items)]
    public Task ListenerRecordingAll() => TracingListeners.Run(_items);
}

/// <summary>The workload and the listeners of the tracing measurements.</summary>
public static class TracingListeners
{
    private static readonly int s_dop = Environment.ProcessorCount;
    private static long s_sink;

    /// <summary>One call: every item's body completes synchronously.</summary>
    public static Task Run(int[] items) =>
        items.FanOutAsync((i, _) => { Interlocked.Add(ref s_sink, i); return ValueTask.CompletedTask; }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(s_dop) });

    /// <summary>Attaches a listener to the "FanOut" source that samples as told, and keeps nothing.</summary>
    public static ActivityListener Attach(ActivitySamplingResult sampling)
    {
        var listener = new ActivityListener
        {
            ShouldListenTo = source => source.Name == FanOutActivities.SourceName,
            Sample = (ref ActivityCreationOptions<ActivityContext> _) => sampling,
        };
        ActivitySource.AddActivityListener(listener);
        return listener;
    }
}
