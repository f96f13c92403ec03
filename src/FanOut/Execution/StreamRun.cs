using System.Threading.Channels;

using FanOut.Sources;

namespace FanOut.Execution;

/// <summary>
/// A fan-out whose results are yielded while later items still run: through a bounded channel in completion order, or
/// through an <see cref="OrderedBuffer{TResult}"/> in source order. Either way a slow consumer stops the workers (back-pressure).
/// </summary>
internal sealed class StreamRun<T, TResult> : FanOutRun<T>, IOrderedRun
{
    private readonly Func<T, CancellationToken, ValueTask<TResult>> _body;
    private readonly Channel<ResultBatch<TResult>>? _channel;
    private readonly OrderedBuffer<TResult>? _ordered;
    private readonly TaskCompletionSource _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public StreamRun(ItemSource<T> source, Func<T, CancellationToken, ValueTask<TResult>> body, FanOutOptions options, CancellationToken cancellationToken)
        : base(source, options, cancellationToken)
    {
        _body = body;

        // Enough room that every item in flight can finish without waiting, and bounded so an endless source stays in bounded memory.
        var limit = options.Limit?.MaxCurrent ?? new AdaptiveLimitOptions().MaxLimit;
        var capacity = (int)Math.Clamp(2L * Math.Max(limit, Environment.ProcessorCount), 64, 4096);
        if (options.Ordered)
        {
            _ordered = new OrderedBuffer<TResult>(capacity);
        }
        else
        {
            // Capacity counts batches: at most `capacity` results wait in whole batches (plus each worker's partial one).
            _channel = Channel.CreateBounded<ResultBatch<TResult>>(new BoundedChannelOptions(Math.Max(2, capacity / ResultBatch<TResult>.Capacity))
            {
                SingleReader = true,
                FullMode = BoundedChannelFullMode.Wait,
            });
        }
    }

    /// <summary>Completes when every worker has stopped: canceled, faulted (FailFast exceptions or a <see cref="FanOutException"/>) or successful.</summary>
    public Task Completion => _completion.Task;

    /// <summary>Completion-order results, in batches (null when ordered). The consumer returns batch arrays to the shared pool.</summary>
    public ChannelReader<ResultBatch<TResult>>? Reader => _channel?.Reader;

    /// <summary>Source-order results (null when unordered).</summary>
    public OrderedBuffer<TResult>? Ordered => _ordered;

    protected override ValueTask<bool> BeforeClaimAsync(CancellationToken cancellationToken) =>
        _ordered?.EnterWindowAsync(cancellationToken) ?? new ValueTask<bool>(true);

    protected override void ClaimAbandoned() => _ordered?.LeaveWindow();

    protected override void ItemFailed(int index) => _ordered?.Skip(index);

    protected override ValueTask InvokeAsync(T item, int index, WorkerSlot<T> worker, CancellationToken cancellationToken)
    {
        var pending = _body(item, cancellationToken);
        if (!pending.IsCompletedSuccessfully)
        {
            return AwaitAndPublishAsync(pending, index, cancellationToken);
        }

        if (_ordered is not null)
        {
            _ordered.Set(index, pending.Result);
            return default;
        }

        // Synchronous result: batch it on this worker. Publish when the batch is full, or when a millisecond tick passed
        // since this worker's previous result: fast bodies then pay one channel write per batch, while a result of a slow
        // body (or one after a pause) goes out at once instead of waiting for the next body.
        var batch = (PendingBatch<TResult>?)worker.State ?? CreateBatch(worker);
        var now = Environment.TickCount64;
        batch.Items[batch.Count++] = pending.Result;
        var tickPassed = now != batch.LastTick;
        batch.LastTick = now;
        return batch.Count == ResultBatch<TResult>.Capacity || tickPassed
            ? Write(batch.Take(), cancellationToken)
            : default;
    }

    protected override ValueTask FlushAsync(WorkerSlot<T> worker) =>
        worker.State is PendingBatch<TResult> { Count: > 0 } batch ? Write(batch.Take(), Token) : default;

    protected override Exception CreateRunAllException(List<FanOutFailure> failures) => new FanOutException(failures, ItemCount);

    protected override void Complete(bool canceled, CancellationToken callerToken, IReadOnlyList<Exception>? exceptions)
    {
        RunOutcome.Settle(_completion, canceled, callerToken, exceptions);

        // After the outcome is set, so the consumer that sees the end of the results can await it at once.
        _channel?.Writer.TryComplete();
        _ordered?.Complete();
    }

    private static PendingBatch<TResult> CreateBatch(WorkerSlot<T> worker)
    {
        var batch = new PendingBatch<TResult>();
        worker.State = batch;
        return batch;
    }

    private ValueTask Write(ResultBatch<TResult> batch, CancellationToken cancellationToken)
    {
        var writer = _channel!.Writer;
        return writer.TryWrite(batch) ? default : writer.WriteAsync(batch, cancellationToken);
    }

    /// <summary>An asynchronous body's result goes out on its own: its worker may be busy with another item by now.</summary>
    private async ValueTask AwaitAndPublishAsync(ValueTask<TResult> pending, int index, CancellationToken cancellationToken)
    {
        var value = await pending.ConfigureAwait(false);
        if (_ordered is not null)
        {
            _ordered.Set(index, value);
            return;
        }

        await Write(new ResultBatch<TResult>(value), cancellationToken).ConfigureAwait(false);
    }
}
