namespace FanOut;

/// <summary>How an item's attempt ended, as the run judged it once and tells its limit.</summary>
internal enum ItemOutcome
{
    /// <summary>The body completed.</summary>
    Succeeded,

    /// <summary>The body threw something that is not an overload signal.</summary>
    Failed,

    /// <summary>The body threw an overload signal (the limit's <see cref="ConcurrencyLimit.IsOverload"/> said so).</summary>
    Overloaded,

    /// <summary>The run was being canceled: the latency and the failure say nothing about the downstream.</summary>
    Canceled,
}
