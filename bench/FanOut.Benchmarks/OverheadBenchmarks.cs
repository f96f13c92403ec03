using System.Threading.Tasks.Dataflow;

using BenchmarkDotNet.Attributes;

namespace FanOut.Benchmarks;

/// <summary>
/// Per-item overhead: a synchronously completing body over an <c>int[]</c> of 1,000,000 items at
/// <see cref="Environment.ProcessorCount"/> in flight. Times are per item (OperationsPerInvoke).
/// </summary>
public class OverheadBenchmarks
{
    private const int Items = 1_000_000;
    private static readonly int s_dop = Environment.ProcessorCount;
    private readonly int[] _items = Enumerable.Range(0, Items).ToArray();

    /// <summary>The body as one delegate, for the hand-written fan-outs.</summary>
    private readonly Func<int, ValueTask> _body;
    private long _sink;

    public OverheadBenchmarks() => _body = Body;

    [Benchmark(Baseline = true, OperationsPerInvoke = Items)]
    public Task ParallelForEachAsync() =>
        Parallel.ForEachAsync(_items, new ParallelOptions { MaxDegreeOfParallelism = s_dop }, (i, _) => Body(i));

    [Benchmark(OperationsPerInvoke = Items)]
    public Task FanOutAsync_NoResults() =>
        _items.FanOutAsync((i, _) => Body(i), new FanOutOptions { Limit = ConcurrencyLimit.Fixed(s_dop) });

    [Benchmark(OperationsPerInvoke = Items)]
    public Task<int[]> FanOutAsync_Results() =>
        _items.FanOutAsync((i, _) => new ValueTask<int>(i), new FanOutOptions { Limit = ConcurrencyLimit.Fixed(s_dop) });

    [Benchmark(OperationsPerInvoke = Items)]
    public async Task<long> FanOutStream_Unordered()
    {
        long sum = 0;
        await foreach (var r in _items.FanOutStream((i, _) => new ValueTask<int>(i), new FanOutOptions { Limit = ConcurrencyLimit.Fixed(s_dop) }))
        {
            sum += r;
        }

        return sum;
    }

    [Benchmark(OperationsPerInvoke = Items)]
    public Task SemaphoreSlim_WhenAll() => HandWrittenFanOuts.SemaphoreSlimWhenAll(_items, s_dop, _body);

    [Benchmark(OperationsPerInvoke = Items)]
    public Task Channel_NWorkers() => HandWrittenFanOuts.ChannelWorkers(_items, s_dop, _body);

    [Benchmark(OperationsPerInvoke = Items)]
    public async Task Dataflow_ActionBlock()
    {
        var block = new ActionBlock<int>(i => Body(i).AsTask(), new ExecutionDataflowBlockOptions { MaxDegreeOfParallelism = s_dop });
        foreach (var item in _items)
        {
            block.Post(item);
        }

        block.Complete();
        await block.Completion;
    }

    private ValueTask Body(int item)
    {
        if (item == -1)
        {
            Interlocked.Increment(ref _sink); // never: keeps the body from being optimized away
        }

        return ValueTask.CompletedTask;
    }
}
