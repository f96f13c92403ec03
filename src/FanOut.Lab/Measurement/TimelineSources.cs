namespace FanOut.Lab.Measurement;

/// <summary>What a timeline reads besides the runtime's counters; each reading must be cheap, lock-free and allocation-free.</summary>
/// <param name="Limit">The strategy's moving limit now, or null when it has none.</param>
/// <param name="Completed">Items that succeeded so far in the run (real I/O), or null.</param>
/// <param name="Rejected">Items answered 429 so far in the run, or null.</param>
/// <param name="ServerInFlight">Requests the server is serving now, or null.</param>
/// <param name="LimitName">The name (<c>AdaptiveLimitOptions.Name</c>) of the adaptive limit the next run uses, read once as
/// it starts, so the timeline records the limit's decisions; null, or a null name, records none.</param>
public sealed record TimelineSources(
    Func<int?>? Limit = null,
    Func<long>? Completed = null,
    Func<long?>? Rejected = null,
    Func<int?>? ServerInFlight = null,
    Func<string?>? LimitName = null)
{
    /// <summary>No source besides the runtime: in flight, threads and the queue only.</summary>
    public static TimelineSources None { get; } = new();
}
