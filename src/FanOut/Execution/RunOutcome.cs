namespace FanOut.Execution;

/// <summary>Settles a run's completion source the one way every run does: canceled wins, then faulted, then the result.</summary>
internal static class RunOutcome
{
    /// <summary>Settles a run without results.</summary>
    public static void Settle(TaskCompletionSource completion, bool canceled, CancellationToken callerToken, IReadOnlyList<Exception>? exceptions)
    {
        if (canceled)
        {
            completion.TrySetCanceled(callerToken);
        }
        else if (exceptions is not null)
        {
            completion.TrySetException(exceptions);
        }
        else
        {
            completion.TrySetResult();
        }
    }

    /// <summary>Settles a run with results; <paramref name="results"/> is called only on success.</summary>
    public static void Settle<TResult>(TaskCompletionSource<TResult> completion, bool canceled, CancellationToken callerToken, IReadOnlyList<Exception>? exceptions, Func<TResult> results)
    {
        if (canceled)
        {
            completion.TrySetCanceled(callerToken);
        }
        else if (exceptions is not null)
        {
            completion.TrySetException(exceptions);
        }
        else
        {
            completion.TrySetResult(results());
        }
    }
}
