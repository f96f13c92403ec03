using System.Buffers;

namespace FanOut.Execution;

/// <summary>
/// What a stream's channel carries: either one result (a body that completed asynchronously) or a pooled array of results
/// a worker collected from bodies that completed synchronously. Batching turns one channel operation per item into one per
/// <see cref="Capacity"/> items, which is what keeps an unordered stream near the cost of <c>FanOutAsync</c>.
/// </summary>
internal readonly struct ResultBatch<TResult>
{
    public const int Capacity = 64;

    public ResultBatch(TResult single)
    {
        Single = single;
        Count = 1;
    }

    public ResultBatch(TResult[] items, int count)
    {
        Items = items;
        Count = count;
    }

    public TResult[]? Items { get; }

    public TResult? Single { get; }

    public int Count { get; }
}

/// <summary>A worker's batch in progress. Touched only by its own worker, between its awaits.</summary>
internal sealed class PendingBatch<TResult>
{
    public TResult[] Items { get; private set; } = ArrayPool<TResult>.Shared.Rent(ResultBatch<TResult>.Capacity);

    public int Count { get; set; }

    /// <summary><see cref="Environment.TickCount64"/> when this worker's previous result went in.</summary>
    public long LastTick { get; set; }

    /// <summary>Hands the items over to the consumer (who returns the array to the pool) and starts a new array.</summary>
    public ResultBatch<TResult> Take()
    {
        var batch = new ResultBatch<TResult>(Items, Count);
        Items = ArrayPool<TResult>.Shared.Rent(ResultBatch<TResult>.Capacity);
        Count = 0;
        return batch;
    }
}
