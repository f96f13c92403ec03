using FanOut.Sources;

namespace FanOut.Execution;

/// <summary>A fan-out whose bodies return results, collected in source order into one array.</summary>
internal sealed class ResultsRun<T, TResult>(
    ItemSource<T> source,
    Func<T, CancellationToken, ValueTask<TResult>> body,
    FanOutOptions options,
    CancellationToken cancellationToken) : FanOutRun<T>(source, options, cancellationToken)
{
    private readonly ResultStore<TResult> _results = new(source.KnownCount);
    private readonly TaskCompletionSource<TResult[]> _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public Task<TResult[]> Task => _completion.Task;

    protected override ValueTask InvokeAsync(T item, int index, WorkerSlot<T> worker, CancellationToken cancellationToken)
    {
        var pending = body(item, cancellationToken);
        if (pending.IsCompletedSuccessfully)
        {
            _results.Set(index, pending.Result);
            return default;
        }

        return AwaitAndStoreAsync(pending, index);
    }

    protected override Exception CreateRunAllException(List<FanOutFailure> failures) =>
        new FanOutException<TResult>(failures, _results.ToArray(ItemCount));

    protected override void Complete(bool canceled, CancellationToken callerToken, IReadOnlyList<Exception>? exceptions)
    {
        RunOutcome.Settle(_completion, canceled, callerToken, exceptions, () => _results.ToArray(ItemCount));
    }

    private async ValueTask AwaitAndStoreAsync(ValueTask<TResult> pending, int index) =>
        _results.Set(index, await pending.ConfigureAwait(false));
}
