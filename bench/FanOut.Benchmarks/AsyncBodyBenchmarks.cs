
using BenchmarkDotNet.Attributes;

namespace FanOut.Benchmarks;

/// <summary>The shape of an asynchronous body: what really makes it wait.</summary>
public enum AsyncBody
{
    /// <summary><c>await Task.Yield()</c>: the body goes asynchronous and resumes on the pool at once.</summary>
    Yield,

    /// <summary>Awaits a <see cref="TaskCompletionSource"/> that another pool thread completes a moment later (an I/O completion's shape).</summary>
    CompletedLater,
}

/// <summary>
/// Per-item overhead with bodies that really go asynchronous (the common case: real I/O), 200,000 items, 2 in flight
/// (<c>Fixed(2)</c> / <c>MaxDegreeOfParallelism = 2</c>). The body's own cost (its state machine, the completion source)
/// is the same for every strategy; times and allocations are per item (OperationsPerInvoke).
/// </summary>
public class AsyncBodyBenchmarks
{
    private const int Items = 200_000;
    private const int Dop = 2;
    private readonly int[] _items = Enumerable.Range(0, Items).ToArray();

    /// <summary>The body as one delegate, for the hand-written fan-outs.</summary>
    private readonly Func<int, ValueTask> _body;
    private readonly FanOutOptions _fixed = new() { Limit = ConcurrencyLimit.Fixed(Dop) };
    private long _sink;

    public AsyncBodyBenchmarks() => _body = RunBody;

    [Params(AsyncBody.Yield, AsyncBody.CompletedLater)]
    public AsyncBody Body { get; set; }

    [Benchmark(Baseline = true, OperationsPerInvoke = Items)]
    public Task ParallelForEachAsync() =>
        Parallel.ForEachAsync(_items, new ParallelOptions { MaxDegreeOfParallelism = Dop }, (i, _) => RunBody(i));

    [Benchmark(OperationsPerInvoke = Items)]
    public Task FanOutAsync_NoResults() => _items.FanOutAsync((i, _) => RunBody(i), _fixed);

    [Benchmark(OperationsPerInvoke = Items)]
    public Task<int[]> FanOutAsync_Results() => _items.FanOutAsync((i, _) => RunBodyWithResult(i), _fixed);

    [Benchmark(OperationsPerInvoke = Items)]
    public Task LeastLoop() => HandWrittenFanOuts.LeastLoop(_items, Dop, _body);

    [Benchmark(OperationsPerInvoke = Items)]
    public Task SemaphoreSlim_WhenAll() => HandWrittenFanOuts.SemaphoreSlimWhenAll(_items, Dop, _body);

    [Benchmark(OperationsPerInvoke = Items)]
    public Task Channel_NWorkers() => HandWrittenFanOuts.ChannelWorkers(_items, Dop, _body);

    // The two bodies do the same work (one state machine each); only the return type differs.
    private async ValueTask RunBody(int item)
    {
        if (Body == AsyncBody.Yield)
        {
            await Task.Yield();
        }
        else
        {
            await CompletedLater();
        }

        Observe(item);
    }

    private async ValueTask<int> RunBodyWithResult(int item)
    {
        if (Body == AsyncBody.Yield)
        {
            await Task.Yield();
        }
        else
        {
            await CompletedLater();
        }

        Observe(item);
        return item;
    }

    private static Task CompletedLater()
    {
        var later = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        ThreadPool.UnsafeQueueUserWorkItem(static s => ((TaskCompletionSource)s!).SetResult(), later);
        return later.Task;
    }

    private void Observe(int item)
    {
        if (item == -1)
        {
            Interlocked.Increment(ref _sink); // never: keeps the body from being optimized away
        }
    }
}
