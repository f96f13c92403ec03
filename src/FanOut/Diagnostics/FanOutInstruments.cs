namespace FanOut.Diagnostics;

/// <summary>
/// Names of the meter and instruments FanOut publishes through <c>System.Diagnostics.Metrics</c>, for
/// <c>dotnet-counters monitor --counters FanOut</c>, an OpenTelemetry <c>AddMeter("FanOut")</c> or a <c>MeterListener</c>.
/// Every measurement carries the tag <see cref="LimitKindTag"/>.
/// </summary>
public static class FanOutInstruments
{
    /// <summary>The meter's name.</summary>
    public const string MeterName = "FanOut";

    /// <summary>Up-down counter of items whose body is running.</summary>
    public const string ItemsInFlight = "fanout.items.in_flight";

    /// <summary>Gauge of the concurrency limit, recorded when a call starts and whenever an adaptive limit changes.</summary>
    public const string LimitCurrent = "fanout.limit.current";

    /// <summary>Counter of items whose body completed successfully.</summary>
    public const string ItemsCompleted = "fanout.items.completed";

    /// <summary>Counter of items whose body threw.</summary>
    public const string ItemsFailed = "fanout.items.failed";

    /// <summary>Counter of re-runs: attempts of items run again after an overload (see <see cref="FanOutOptions.OverloadRetries"/>).</summary>
    public const string ItemsRetried = "fanout.items.retried";

    /// <summary>Histogram of item durations in seconds.</summary>
    public const string ItemDuration = "fanout.item.duration";

    /// <summary>Counter of changes of an adaptive limit, tagged <see cref="LimitKindTag"/>, <see cref="LimitReasonTag"/> and (for a named limit) <see cref="LimitNameTag"/>.</summary>
    public const string LimitChanges = "fanout.limit.changes";

    /// <summary>Tag on <see cref="LimitChanges"/>: why the limit changed, a <see cref="LimitChangeReason"/> name.</summary>
    public const string LimitReasonTag = "fanout.limit.reason";

    /// <summary>Tag on <see cref="LimitChanges"/>: the limit's <see cref="AdaptiveLimitOptions.Name"/>, when it has one (names are the user's: keep them few).</summary>
    public const string LimitNameTag = "fanout.limit.name";

    /// <summary>Tag naming the kind of limit: <c>fixed</c>, <c>unbounded</c>, <c>adaptive</c>, <c>settable</c>, <c>partitioned</c> (or a custom limit's <see cref="ConcurrencyLimit.Kind"/>).</summary>
    public const string LimitKindTag = "fanout.limit.kind";

    /// <summary>
    /// Observable gauge of items in flight per key of every live <see cref="PartitionedConcurrencyLimit{TKey}"/>, tagged
    /// <see cref="PartitionTag"/>: the first <see cref="PartitionedLimitOptions.MetricKeys"/> keys by name, the rest summed as <c>other</c>.
    /// </summary>
    public const string PartitionInFlight = "fanout.partition.in_flight";

    /// <summary>Tag naming a partition key (bounded cardinality: see <see cref="PartitionInFlight"/>).</summary>
    public const string PartitionTag = "fanout.partition.key";
}
