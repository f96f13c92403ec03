namespace FanOut;

/// <summary>How an item's attempt ended, as the run judged it once and tells its limit (<see cref="ConcurrencyLimit.RecordCompletion(long, ItemOutcome)"/>).</summary>
public enum ItemOutcome
{
    /// <summary>The body completed.</summary>
    Succeeded,

    /// <summary>The body threw something that is not an overload signal.</summary>
    Failed,

    /// <summary>The downstream said it was overloaded (the limit's <see cref="ConcurrencyLimit.IsOverload"/> said so), or the attempt timed out.</summary>
    Overloaded,

    /// <summary>The run was being canceled: the latency and the failure say nothing about the downstream.</summary>
    Canceled,
}
