using FanOut.Sources;

namespace FanOut.Execution;

/// <summary>A fan-out whose bodies return results, collected in source order into one array.</summary>
internal sealed class ResultsRun<T, TResult> : FanOutRun<T>
{
    private readonly Func<T, CancellationToken, ValueTask<TResult>> _body;
    private readonly ResultStore<TResult> _results;
    /// <summary>Completed by the last worker as its very last act: the caller's continuation may run right there (see ActionRun).</summary>
    private readonly TaskCompletionSource<TResult[]> _completion = new();

    public ResultsRun(ItemSource<T> source, Func<T, CancellationToken, ValueTask<TResult>> body, FanOutOptions options, CancellationToken cancellationToken)
        : base(source, options, cancellationToken)
    {
        _body = body;
        _results = new ResultStore<TResult>(source.KnownCount);

        // One array holds every result: a source longer than that fails with a clear error instead of wrapping around.
        source.MaxCount = Array.MaxLength;
    }

    public Task<TResult[]> Task => _completion.Task;

    protected override ValueTask InvokeAsync(T item, long index, WorkerSlot<T> worker, CancellationToken cancellationToken)
    {
        var pending = _body(item, cancellationToken);
        if (pending.IsCompletedSuccessfully)
        {
            _results.Set(index, pending.Result);
            return default;
        }

        var completion = (ResultCompletion<TResult>?)worker.State ?? CreateCompletion(worker);
        return completion.Track(pending, index);
    }

    private ResultCompletion<TResult> CreateCompletion(WorkerSlot<T> worker)
    {
        var completion = new ResultCompletion<TResult>(_results);
        worker.State = completion;
        return completion;
    }

    protected override Exception CreateRunAllException(List<FanOutFailure> failures, long failureCount, IReadOnlyList<Exception> sourceExceptions) =>
        new FanOutException<TResult>(failures, _results.ToArray(ItemCount), sourceExceptions);

    protected override void Complete(bool canceled, CancellationToken callerToken, IReadOnlyList<Exception>? exceptions)
    {
        RunOutcome.Settle(_completion, canceled, callerToken, exceptions, () => _results.ToArray(ItemCount));
    }
}
