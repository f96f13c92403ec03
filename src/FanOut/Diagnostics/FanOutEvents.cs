namespace FanOut.Diagnostics;

/// <summary>
/// The events of the "FanOut" <c>EventSource</c> (name <see cref="FanOutActivities.SourceName"/>): how a listener reads why an
/// adaptive limit changed. The same change is counted on the meter (<see cref="FanOutInstruments.LimitChanges"/>) and added
/// as an activity event (<see cref="FanOutActivities.LimitChangeEvent"/>) to the activity current where it was decided.
/// </summary>
public static class FanOutEvents
{
    /// <summary>The event source's name.</summary>
    public const string SourceName = FanOutActivities.SourceName;

    /// <summary>
    /// Event id of <c>LimitChanged</c>, whose payload is, in order: <c>kind</c> (string), <c>name</c> (string: the limit's
    /// <see cref="AdaptiveLimitOptions.Name"/>, or its kind), <c>from</c> and <c>to</c> (int), <c>reason</c> (string: a
    /// <see cref="LimitChangeReason"/> name), <c>windowMedianMs</c> (double: the median latency of the window decided on, 0
    /// when none was read), <c>baselineMs</c> (double: the uncontended latency compared with, 0 until measured),
    /// <c>inFlight</c> (int), <c>sequence</c> (long: 1 for the limit's first change, then one more per change) and (version 1)
    /// <c>limitId</c> (long: the limit's <see cref="LimitStateId"/> id, 0 while no session watches limit states). Changes are
    /// published outside the limit's lock, so two threads' changes may reach a listener out of order: the sequence orders them.
    /// </summary>
    public const int LimitChangedId = 1;

    /// <summary>The event name of <see cref="LimitChangedId"/>.</summary>
    public const string LimitChanged = "LimitChanged";

    /// <summary>
    /// Event id of <c>LimitState</c> (keyword <see cref="LimitStatesKeyword"/>, once per interval for every limit in use):
    /// <c>limitId</c> (long: unique in the process), <c>kind</c>, <c>name</c> (strings, as in <see cref="LimitChangedId"/>),
    /// <c>limit</c>, <c>inFlight</c>, <c>waiting</c> (int: callers waiting for a permit), <c>latencyMs</c> (double: mean
    /// latency of the answers in the interval, -1 when none or the limit does not time its items), <c>baselineMs</c>
    /// (double: an adaptive limit's uncontended latency, 0 until measured), and since the limit was created, <c>overloads</c>
    /// (long: answers that said "overloaded"), <c>pauses</c> (long: Retry-After pauses) and <c>changes</c> (long).
    /// A limit in use is one a call, a wait or a change touched since the session began; one idle for
    /// <see cref="IdleIntervalsBeforeDropped"/> intervals is dropped until it is used again.
    /// </summary>
    public const int LimitStateId = 2;

    /// <summary>The event name of <see cref="LimitStateId"/>.</summary>
    public const string LimitState = "LimitState";

    /// <summary>
    /// Event id of <c>LimitsWatched</c> (keyword <see cref="LimitStatesKeyword"/>), which closes each interval:
    /// <c>limits</c> (int: the <c>LimitState</c> events just sent) and <c>intervalSeconds</c> (double). The first comes at
    /// once when a session starts, so a watcher knows FanOut is loaded even while no limit is in use.
    /// </summary>
    public const int LimitsWatchedId = 3;

    /// <summary>The event name of <see cref="LimitsWatchedId"/>.</summary>
    public const string LimitsWatched = "LimitsWatched";

    /// <summary>The keyword that selects <see cref="LimitStateId"/> and <see cref="LimitsWatchedId"/>.</summary>
    public const long LimitStatesKeyword = 0x1;

    /// <summary>The keyword of <see cref="LimitChangedId"/> (a session that names keywords must name it; one that names none gets every event).</summary>
    public const long LimitChangesKeyword = 0x2;

    /// <summary>The session argument that sets the interval of <see cref="LimitStateId"/>, in seconds (0.1-60; default 1).</summary>
    public const string StateIntervalArgument = "StateIntervalSec";

    /// <summary>Intervals a limit stays watched with nothing in flight, nobody waiting and no change.</summary>
    public const int IdleIntervalsBeforeDropped = 5;

    internal static readonly TimeSpan DefaultStateInterval = TimeSpan.FromSeconds(1);
    internal static readonly TimeSpan MinStateInterval = TimeSpan.FromSeconds(0.1);
    internal static readonly TimeSpan MaxStateInterval = TimeSpan.FromSeconds(60);
}
