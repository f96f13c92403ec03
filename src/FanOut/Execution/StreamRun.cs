using System.Threading.Channels;

using FanOut.Sources;

namespace FanOut.Execution;

/// <summary>
/// A fan-out whose results are yielded while later items still run: through a bounded channel in completion order, or
/// through an <see cref="OrderedBuffer{TResult}"/> in source order. Either way a slow consumer stops the workers (back-pressure).
/// </summary>
internal sealed class StreamRun<T, TResult> : FanOutRun<T>
{
    private readonly Func<T, CancellationToken, ValueTask<TResult>> _body;
    private readonly Channel<TResult>? _channel;
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
            _channel = Channel.CreateBounded<TResult>(new BoundedChannelOptions(capacity)
            {
                SingleReader = true,
                FullMode = BoundedChannelFullMode.Wait,
            });
        }
    }

    /// <summary>Completes when every worker has stopped: canceled, faulted (FailFast exceptions or a <see cref="FanOutException"/>) or successful.</summary>
    public Task Completion => _completion.Task;

    /// <summary>Yields results until the run completes, then surfaces its outcome.</summary>
    public async IAsyncEnumerable<TResult> ReadAllAsync()
    {
        if (_channel is not null)
        {
            var reader = _channel.Reader;
            while (await reader.WaitToReadAsync().ConfigureAwait(false))
            {
                while (reader.TryRead(out var value))
                {
                    yield return value;
                }
            }
        }
        else
        {
            var ordered = _ordered!;
            while (true)
            {
                if (ordered.TryTake(out var value, out var hasValue))
                {
                    if (hasValue)
                    {
                        yield return value;
                    }

                    continue;
                }

                if (!await ordered.WaitAsync().ConfigureAwait(false))
                {
                    break;
                }
            }
        }

        await Completion.ConfigureAwait(false);
    }

    protected override ValueTask<bool> BeforeClaimAsync(CancellationToken cancellationToken) =>
        _ordered?.EnterWindowAsync(cancellationToken) ?? new ValueTask<bool>(true);

    protected override void ClaimAbandoned() => _ordered?.LeaveWindow();

    protected override void ItemFailed(int index) => _ordered?.Skip(index);

    protected override ValueTask InvokeAsync(T item, int index, CancellationToken cancellationToken)
    {
        var pending = _body(item, cancellationToken);
        if (pending.IsCompletedSuccessfully)
        {
            return Publish(index, pending.Result, cancellationToken);
        }

        return AwaitAndPublishAsync(pending, index, cancellationToken);
    }

    protected override Exception CreateRunAllException(List<FanOutFailure> failures) => new FanOutException(failures, ItemCount);

    protected override void Complete(bool canceled, CancellationToken callerToken, IReadOnlyList<Exception>? exceptions)
    {
        if (canceled)
        {
            _completion.TrySetCanceled(callerToken);
        }
        else if (exceptions is not null)
        {
            _completion.TrySetException(exceptions);
        }
        else
        {
            _completion.TrySetResult();
        }

        // After the outcome is set, so the consumer that sees the end of the results can await it at once.
        _channel?.Writer.TryComplete();
        _ordered?.Complete();
    }

    private ValueTask Publish(int index, TResult value, CancellationToken cancellationToken)
    {
        if (_ordered is not null)
        {
            _ordered.Set(index, value);
            return default;
        }

        var writer = _channel!.Writer;
        return writer.TryWrite(value) ? default : writer.WriteAsync(value, cancellationToken);
    }

    private async ValueTask AwaitAndPublishAsync(ValueTask<TResult> pending, int index, CancellationToken cancellationToken) =>
        await Publish(index, await pending.ConfigureAwait(false), cancellationToken).ConfigureAwait(false);
}
