using FanOut.Sources;

namespace FanOut.Execution;

/// <summary>A fan-out whose bodies return nothing.</summary>
internal sealed class ActionRun<T>(
    ItemSource<T> source,
    Func<T, CancellationToken, ValueTask> body,
    FanOutOptions options,
    CancellationToken cancellationToken) : FanOutRun<T>(source, options, cancellationToken)
{
    /// <summary>
    /// Completed by the last worker as its very last act (everything of the call has finished), so the caller's continuation
    /// may run right there, as Parallel.ForEachAsync's does, instead of waiting for another pool thread.
    /// </summary>
    private readonly TaskCompletionSource _completion = new();

    public Task Task => _completion.Task;

    protected override ValueTask InvokeAsync(T item, long index, WorkerSlot<T> worker, CancellationToken cancellationToken) => body(item, cancellationToken);

    protected override Exception CreateRunAllException(List<FanOutFailure> failures, long failureCount, IReadOnlyList<Exception> sourceExceptions) =>
        new FanOutException(failures, ItemCount, failureCount, sourceExceptions);

    protected override void Complete(bool canceled, CancellationToken callerToken, IReadOnlyList<Exception>? exceptions)
    {
        RunOutcome.Settle(_completion, canceled, callerToken, exceptions);
    }
}
