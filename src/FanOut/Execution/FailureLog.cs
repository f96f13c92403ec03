using System.Diagnostics;

namespace FanOut.Execution;

/// <summary>
/// What went wrong in one call, kept until it completes: exceptions that fault the call as they are (FailFast body failures,
/// source failures, failing callbacks) and RunAll body failures tied to their items. Safe from any worker; user code never
/// runs under its lock.
/// </summary>
internal sealed class FailureLog(ErrorMode errors, int maxRetainedFailures)
{
    /// <summary>Guards every field below.</summary>
    private readonly Lock _lock = new();

    /// <summary>Exceptions that fault the call as they are.</summary>
    private List<Exception>? _exceptions;

    /// <summary>RunAll body failures, tied to their items (at most <c>maxRetainedFailures</c>).</summary>
    private List<FanOutFailure>? _failures;

    /// <summary>RunAll body failures, kept or not.</summary>
    private long _failureCount;

    /// <summary>Adds an exception that faults the call.</summary>
    public void Add(Exception exception)
    {
        lock (_lock)
        {
            AssertInvariants();
            (_exceptions ??= []).Add(exception);
        }
    }

    /// <summary>Adds exceptions that fault the call (callbacks on the run's token that threw).</summary>
    public void AddRange(IEnumerable<Exception> exceptions)
    {
        lock (_lock)
        {
            AssertInvariants();
            (_exceptions ??= []).AddRange(exceptions);
        }
    }

    /// <summary>Counts a RunAll body failure, and keeps it while fewer than the retained maximum are kept.</summary>
    public void AddFailure(long index, Exception failure, Exception? callbackFailure)
    {
        lock (_lock)
        {
            AssertInvariants();
            _failureCount++;
            if ((_failures ??= []).Count < maxRetainedFailures)
            {
                _failures.Add(new FanOutFailure(index, failure) { CallbackException = callbackFailure });
            }
        }
    }

    /// <summary>
    /// What the call faults with once every worker stopped; null when nothing went wrong. RunAll failures come first, as
    /// one exception built by <paramref name="createRunAllException"/> (failures in index order, with what the source threw),
    /// so that a catch of it, and the partial results it holds, is never defeated by a failing Dispose.
    /// </summary>
    public IReadOnlyList<Exception>? Collect(Func<List<FanOutFailure>, long, IReadOnlyList<Exception>, Exception> createRunAllException)
    {
        List<FanOutFailure>? failures;
        List<Exception>? exceptions;
        long failureCount;
        lock (_lock)
        {
            AssertInvariants();
            failures = _failures;
            exceptions = _exceptions;
            failureCount = _failureCount;
        }

        if (failures is not { Count: > 0 })
        {
            return exceptions;
        }

        // Every worker has stopped: nobody adds to the lists any more, so they are ours to sort and hand over.
        failures.Sort(static (a, b) => a.Index.CompareTo(b.Index));
        return [createRunAllException(failures, failureCount, (IReadOnlyList<Exception>?)exceptions ?? [])];
    }

    [Conditional("DEBUG")]
    private void AssertInvariants()
    {
        Debug.Assert(_lock.IsHeldByCurrentThread);
        Debug.Assert(errors == ErrorMode.RunAll || _failures is null);
        Debug.Assert(_failureCount >= (_failures?.Count ?? 0));
    }
}
