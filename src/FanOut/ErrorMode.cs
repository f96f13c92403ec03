namespace FanOut;

/// <summary>What a fan-out does when a body throws.</summary>
public enum ErrorMode
{
    /// <summary>
    /// The first failure stops new items from starting, cancels the token every body was given, waits for the
    /// items in flight, then faults with every exception that occurred (as <c>Parallel.ForEachAsync</c> does).
    /// </summary>
    FailFast,

    /// <summary>
    /// Every item runs; if any failed, the call faults with a <see cref="FanOutException"/> that ties each failure to its
    /// item's index and (for calls that return results) keeps the results of the items that succeeded.
    /// </summary>
    RunAll,
}
