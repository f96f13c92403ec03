using System.Threading.Channels;

using FanOut.Sources;

namespace FanOut.Execution;

/// <summary>
/// A fan-out whose results are yielded while later items still run: through a bounded channel in completion order, or
/// through an <see cref="OrderedBuffer{TResult}"/> in source order. Either way a slow consumer stops the workers
/// (back-pressure), and a worker waits for the consumer only after it gave its permit back.
/// </summary>
/// <remarks>
/// Each result is published the moment its body finishes (completion order never holds a finished result back). With
/// <c>yieldFailures</c> (<c>FanOutOutcomes</c>) a body's failure is published as an outcome like a success and never
/// recorded; otherwise RunAll keeps at most <see cref="FanOutException.FanOutStreamRetainedFailures"/> of them, so an
/// endless source runs in bounded memory.
/// </remarks>
internal sealed class StreamRun<T, TResult> : FanOutRun<T>
{
    /// <summary>The least room of a completion-order stream's channel.</summary>
    internal const int MinChannelCapacity = 1024;

    private readonly Func<T, CancellationToken, ValueTask<TResult>> _body;
    private readonly bool _yieldFailures;
    private readonly Channel<FanOutOutcome<TResult>>? _channel;
    private readonly OrderedBuffer<FanOutOutcome<TResult>>? _ordered;
    private readonly TaskCompletionSource _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public StreamRun(
        ItemSource<T> source,
        Func<T, CancellationToken, ValueTask<TResult>> body,
        FanOutOptions options,
        bool yieldFailures,
        CancellationToken cancellationToken)
        : base(source, options, cancellationToken, FanOutException.FanOutStreamRetainedFailures, hasWindow: options.Ordered)
    {
        _body = body;
        _yieldFailures = yieldFailures;

        // Enough room that every item in flight can finish without waiting, and bounded so an endless source stays in
        // bounded memory. Completion order gets at least 1,024 (as a hand-written Channel would): a consumer that reads in
        // bursts then rarely makes a worker wait, and each wait costs a hand-off. Source order keeps its window small,
        // since a slow item holds the whole window's results back.
        var limit = options.Limit?.MaxCurrent ?? new AdaptiveLimitOptions().MaxLimit;
        var window = (int)Math.Clamp(2L * Math.Max(limit, Environment.ProcessorCount), 64, 4096);
        var capacity = options.Ordered ? window : Math.Max(window, MinChannelCapacity);
        if (options.Ordered)
        {
            _ordered = new OrderedBuffer<FanOutOutcome<TResult>>(capacity, source.FirstIndex, options.CommittedPrefix);
        }
        else
        {
            _channel = Channel.CreateBounded<FanOutOutcome<TResult>>(new BoundedChannelOptions(capacity)
            {
                SingleReader = true,
                FullMode = BoundedChannelFullMode.Wait,
            });
        }
    }

    /// <summary>Completes when every worker has stopped: canceled, faulted (FailFast exceptions or a <see cref="FanOutException"/>) or successful.</summary>
    public Task Completion => _completion.Task;

    /// <summary>Completion-order outcomes (null when ordered); only successes unless failures are yielded.</summary>
    public ChannelReader<FanOutOutcome<TResult>>? Reader => _channel?.Reader;

    /// <summary>Source-order outcomes (null when unordered).</summary>
    public OrderedBuffer<FanOutOutcome<TResult>>? Ordered => _ordered;

    protected override ValueTask<bool> BeforeClaimAsync(CancellationToken cancellationToken) =>
        _ordered?.EnterWindowAsync(cancellationToken) ?? new ValueTask<bool>(true);

    protected override void ClaimAbandoned() => _ordered?.LeaveWindow();

    protected override void ItemFailed(long index)
    {
        if (Errors == ErrorMode.FailFast)
        {
            // Nothing from the failed index on is yielded, though later items may have finished: the failure comes next.
            _ordered?.StopAt(index);
        }
        else
        {
            _ordered?.Skip(index);
        }
    }

    protected override ValueTask InvokeAsync(T item, long index, WorkerSlot<T> worker, CancellationToken cancellationToken)
    {
        var holder = (OutcomeHolder<TResult>?)worker.State ?? CreateHolder(worker);
        var pending = _body(item, cancellationToken);
        if (pending.IsCompletedSuccessfully)
        {
            holder.Set(pending.Result);
            return default;
        }

        return holder.Completion.Track(pending, index);
    }

    protected override bool TakeFailure(WorkerSlot<T> worker, long index, Exception failure)
    {
        if (!_yieldFailures)
        {
            return false;
        }

        ((OutcomeHolder<TResult>)worker.State!).Fail(failure);
        return true;
    }

    protected override bool TryPublish(WorkerSlot<T> worker, long index)
    {
        var outcome = ((OutcomeHolder<TResult>)worker.State!).Take(index);
        if (_ordered is not null)
        {
            // Never waits: the window reserved this index's slot before the claim.
            if (outcome.Exception is null)
            {
                _ordered.Set(index, outcome);
            }
            else
            {
                _ordered.SetFailed(index, outcome); // FanOutOutcomes: yielded, and the end of the committed prefix
            }

            return true;
        }

        if (_channel!.Writer.TryWrite(outcome))
        {
            return true;
        }

        ((OutcomeHolder<TResult>)worker.State!).Keep(outcome);
        return false;
    }

    protected override ValueTask PublishAsync(WorkerSlot<T> worker, long index, CancellationToken cancellationToken) =>
        _channel!.Writer.WriteAsync(((OutcomeHolder<TResult>)worker.State!).Take(index), cancellationToken);

    protected override Exception CreateRunAllException(List<FanOutFailure> failures, long failureCount, IReadOnlyList<Exception> sourceExceptions) =>
        new FanOutException(failures, ItemCount, failureCount, sourceExceptions);

    protected override void Complete(bool canceled, CancellationToken callerToken, IReadOnlyList<Exception>? exceptions)
    {
        RunOutcome.Settle(_completion, canceled, callerToken, exceptions);

        // After the outcome is set, so the consumer that sees the end of the results can await it at once.
        _channel?.Writer.TryComplete();
        _ordered?.Complete();
    }

    private static OutcomeHolder<TResult> CreateHolder(WorkerSlot<T> worker)
    {
        var holder = new OutcomeHolder<TResult>();
        worker.State = holder;
        return holder;
    }
}
