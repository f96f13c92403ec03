using System.Diagnostics.Tracing;
using System.Globalization;

namespace FanOut.Diagnostics;

/// <summary>
/// The "FanOut" <see cref="EventSource"/>: every change of an adaptive limit with its reason, for an in-process
/// <see cref="EventListener"/>, <c>dotnet-trace</c> or any EventPipe client (<c>--providers FanOut</c>); with the
/// <see cref="Keywords.LimitStates"/> keyword, the state of every limit in use once per interval (<c>fanout watch</c>).
/// </summary>
[EventSource(Name = FanOutActivities.SourceName)]
internal sealed class FanOutEventSource : EventSource
{
    /// <summary>The one instance.</summary>
    public static readonly FanOutEventSource Log = new();

    /// <summary>True while a session asked for <see cref="Keywords.LimitStates"/>: limits in use then register to be watched.</summary>
    private volatile bool _watching;

    private FanOutEventSource()
    {
    }

    /// <summary>The keywords a session selects events with.</summary>
    public static class Keywords
    {
        /// <summary><c>LimitState</c> and <c>LimitsWatched</c>, once per interval (argument <see cref="FanOutEvents.StateIntervalArgument"/>, seconds).</summary>
        public const EventKeywords LimitStates = (EventKeywords)FanOutEvents.LimitStatesKeyword;

        /// <summary><c>LimitChanged</c>.</summary>
        public const EventKeywords LimitChanges = (EventKeywords)FanOutEvents.LimitChangesKeyword;
    }

    /// <summary>True while some session watches limit states: a limit in use then registers itself (<see cref="WatchedLimits.Track"/>).</summary>
    public bool IsWatching => _watching;

    /// <summary>An adaptive limit changed from <paramref name="from"/> to <paramref name="to"/> for <paramref name="reason"/> (a <see cref="LimitChangeReason"/> name).</summary>
    [Event(FanOutEvents.LimitChangedId, Version = 1, Level = EventLevel.Informational, Keywords = Keywords.LimitChanges, Message = "{1} limit {2} -> {3}: {4} (window median {5} ms, baseline {6} ms, {7} in flight; change {8})")]
    public void LimitChanged(string kind, string name, int from, int to, string reason, double windowMedianMs, double baselineMs, int inFlight, long sequence, long limitId) =>
        WriteEvent(FanOutEvents.LimitChangedId, kind, name, from, to, reason, windowMedianMs, baselineMs, inFlight, sequence, limitId);

    /// <summary>One limit's state at the end of an interval; counts (<paramref name="overloads"/>, <paramref name="pauses"/>, <paramref name="changes"/>) are since the limit was created.</summary>
    [Event(FanOutEvents.LimitStateId, Level = EventLevel.Informational, Keywords = Keywords.LimitStates, Message = "{1} #{0}: limit {3}, {4} in flight, {5} waiting")]
    public void LimitState(long limitId, string kind, string name, int limit, int inFlight, int waiting, double latencyMs, double baselineMs, long overloads, long pauses, long changes) =>
        WriteEvent(FanOutEvents.LimitStateId, limitId, kind, name, limit, inFlight, waiting, latencyMs, baselineMs, overloads, pauses, changes);

    /// <summary>Closes an interval: <paramref name="limits"/> <c>LimitState</c> events came before it (0: FanOut is loaded, no limit is in use).</summary>
    [Event(FanOutEvents.LimitsWatchedId, Level = EventLevel.Informational, Keywords = Keywords.LimitStates, Message = "{0} limits in use")]
    public void LimitsWatched(int limits, double intervalSeconds) => WriteEvent(FanOutEvents.LimitsWatchedId, limits, intervalSeconds);

    /// <summary>Starts or stops the interval's timer as sessions ask for <see cref="Keywords.LimitStates"/> or stop.</summary>
    protected override void OnEventCommand(EventCommandEventArgs command)
    {
        // The flag falls before the registry stops and rises after it starts, so a limit that sees it can always register.
        if (!IsEnabled(EventLevel.Informational, Keywords.LimitStates))
        {
            _watching = false;
            WatchedLimits.Stop();
            return;
        }

        var interval = FanOutEvents.DefaultStateInterval;
        if (command.Arguments is { } arguments && arguments.TryGetValue(FanOutEvents.StateIntervalArgument, out var text)
            && double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out var seconds) && seconds > 0)
        {
            interval = TimeSpan.FromSeconds(Math.Clamp(seconds, FanOutEvents.MinStateInterval.TotalSeconds, FanOutEvents.MaxStateInterval.TotalSeconds));
        }

        WatchedLimits.Start(this, interval);
        _watching = true;
    }
}
