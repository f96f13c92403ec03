namespace FanOut.Diagnostics;

/// <summary>
/// Names of the activities FanOut publishes through <c>System.Diagnostics.ActivitySource</c>, for an OpenTelemetry
/// <c>AddSource("FanOut")</c> or an <c>ActivityListener</c>: one activity per call and, when sampled, one per attempt of
/// each item, its child.
/// </summary>
/// <remarks>
/// <para>
/// Names follow the OpenTelemetry conventions as .NET applies them: the activity (operation) names are low-cardinality and
/// dotted like the runtime's own (<c>System.Net.Http.HttpRequestOut</c>); tags and events are lowercase, dot-namespaced
/// under <c>fanout.</c> like the meter's instruments (<see cref="FanOutInstruments"/>). A failed activity has status
/// <c>Error</c>, its description the exception's message, and the exception recorded as an <c>exception</c> event
/// (<c>Activity.AddException</c>, OpenTelemetry's exception attributes).
/// </para>
/// <para>
/// With no listener on the source the cost is one check when a call starts and one branch per item attempt: no activity
/// and no allocation. A listener attached while a call runs is seen by the next call.
/// </para>
/// </remarks>
public static class FanOutActivities
{
    /// <summary>The activity source's name (its version is the assembly's).</summary>
    public const string SourceName = "FanOut";

    /// <summary>One fan-out call (<c>FanOutAsync</c>, or one enumeration of a stream), from its start until everything it started has finished.</summary>
    public const string Run = "FanOut.Run";

    /// <summary>One attempt of one item: its body, from the call of the body until it finished (a re-run is a new attempt).</summary>
    public const string Item = "FanOut.Item";

    /// <summary>Tag on <see cref="Item"/>: the item's position in the source (0-based).</summary>
    public const string ItemIndexTag = "fanout.item.index";

    /// <summary>Tag on <see cref="Item"/>: the attempt, 0 for the first run of the item, k for its k-th re-run after an overload.</summary>
    public const string ItemAttemptTag = "fanout.item.attempt";

    /// <summary>Tag on both: the kind of limit (<c>fixed</c>, <c>unbounded</c>, <c>adaptive</c>, or a custom limit's kind).</summary>
    public const string LimitKindTag = FanOutInstruments.LimitKindTag;

    /// <summary>Tag on both: the limit's <see cref="ConcurrencyLimit.Current"/> when the call or the attempt started.</summary>
    public const string LimitCurrentTag = "fanout.limit.current";

    /// <summary>Tag on <see cref="Run"/>, set when it ends: how many items the source had (or the call took before it stopped).</summary>
    public const string ItemCountTag = "fanout.item.count";

    /// <summary>
    /// Event on <see cref="Item"/>: the attempt was judged an overload (HTTP 429/503, an <see cref="OverloadedException"/>, or
    /// an <see cref="FanOutOptions.ItemTimeout"/>), which backs an adaptive limit off.
    /// </summary>
    public const string OverloadEvent = "fanout.item.overload";

    /// <summary>
    /// Event on <see cref="Item"/>: the item will run again after an overload; tags <see cref="ItemAttemptTag"/> (the next
    /// attempt) and <see cref="RetryDelayTag"/>.
    /// </summary>
    public const string RetryEvent = "fanout.item.retry";

    /// <summary>Tag on <see cref="RetryEvent"/>: how long the item waits before it runs again, in seconds.</summary>
    public const string RetryDelayTag = "fanout.item.retry_delay";

    /// <summary>
    /// Event on the activity current where an adaptive limit changed (the item attempt whose completion decided it, or the
    /// call's): tags <see cref="LimitFromTag"/>, <see cref="LimitToTag"/>, <see cref="LimitReasonTag"/>,
    /// <see cref="WindowMedianTag"/>, <see cref="BaselineTag"/>, <see cref="InFlightTag"/>, <see cref="LimitNameTag"/> and <see cref="LimitKindTag"/>.
    /// </summary>
    public const string LimitChangeEvent = "fanout.limit.change";

    /// <summary>Tag on <see cref="LimitChangeEvent"/>: the limit's <see cref="AdaptiveLimitOptions.Name"/>, or its kind.</summary>
    public const string LimitNameTag = FanOutInstruments.LimitNameTag;

    /// <summary>Tag on <see cref="LimitChangeEvent"/>: the limit before the change.</summary>
    public const string LimitFromTag = "fanout.limit.from";

    /// <summary>Tag on <see cref="LimitChangeEvent"/>: the limit after the change.</summary>
    public const string LimitToTag = "fanout.limit.to";

    /// <summary>Tag on <see cref="LimitChangeEvent"/>: why it changed, a <see cref="LimitChangeReason"/> name.</summary>
    public const string LimitReasonTag = FanOutInstruments.LimitReasonTag;

    /// <summary>Tag on <see cref="LimitChangeEvent"/>: the median latency of the window decided on, in milliseconds (0: none read).</summary>
    public const string WindowMedianTag = "fanout.limit.window_median_ms";

    /// <summary>Tag on <see cref="LimitChangeEvent"/>: the uncontended latency the window was compared with, in milliseconds (0: not measured yet).</summary>
    public const string BaselineTag = "fanout.limit.baseline_ms";

    /// <summary>Tag on <see cref="LimitChangeEvent"/>: the change's number among the limit's changes (1, 2, ...), which orders changes published from different threads.</summary>
    public const string LimitSequenceTag = "fanout.limit.sequence";

    /// <summary>Tag on <see cref="LimitChangeEvent"/>: items in flight on the limit when it changed.</summary>
    public const string InFlightTag = "fanout.limit.in_flight";
}
