namespace FanOut.Lab.Outcomes;

/// <summary>What the items of one run did around its trigger (the first failure, or the caller's cancellation), and what the call gave back.</summary>
public sealed record OutcomeRunMetrics
{
    /// <summary>Items whose work started.</summary>
    public required int ItemsStarted { get; init; }

    /// <summary>Items whose work started after the trigger.</summary>
    public required int StartedAfterTrigger { get; init; }

    /// <summary>Items that ran to their end.</summary>
    public required int Completed { get; init; }

    /// <summary>Items that threw their failure.</summary>
    public required int Failed { get; init; }

    /// <summary>Items that saw the cancellation and stopped early.</summary>
    public required int Canceled { get; init; }

    /// <summary>The item that failed first, by time; null when none failed.</summary>
    public int? FirstFailedItem { get; init; }

    /// <summary>Milliseconds from the trigger to the call's return; null when nothing triggered.</summary>
    public double? StopMs { get; init; }

    /// <summary>Items still running when the call returned (work the call left behind).</summary>
    public required int RunningAtReturn { get; init; }

    /// <summary>The call's final state: <c>RanToCompletion</c>, <c>Faulted</c> or <c>Canceled</c>.</summary>
    public required string FinalState { get; init; }

    /// <summary>The type name of what the call threw to its caller, or <c>nothing</c>.</summary>
    public required string Threw { get; init; }

    /// <summary>The item named by what was thrown, when it is an item's failure.</summary>
    public int? ThrewItem { get; init; }

    /// <summary>Distinct exceptions the caller can reach (thrown, inner, and the task's).</summary>
    public required int ExceptionsReachable { get; init; }

    /// <summary>How many of the reachable exceptions are cancellations.</summary>
    public required int CancellationsReachable { get; init; }

    /// <summary>Distinct failed items among the reachable exceptions.</summary>
    public required int FailuresReachable { get; init; }

    /// <summary>Failures the API ties to their item's index.</summary>
    public required int FailuresIndexedByApi { get; init; }
}
