using System.Diagnostics.Tracing;

namespace FanOut.Diagnostics;

/// <summary>
/// The "FanOut" <see cref="EventSource"/>: every change of an adaptive limit with its reason, for an in-process
/// <see cref="EventListener"/>, <c>dotnet-trace</c> or any EventPipe client (<c>--providers FanOut</c>).
/// </summary>
[EventSource(Name = FanOutActivities.SourceName)]
internal sealed class FanOutEventSource : EventSource
{
    /// <summary>The one instance.</summary>
    public static readonly FanOutEventSource Log = new();

    private FanOutEventSource()
    {
    }

    /// <summary>An adaptive limit changed from <paramref name="from"/> to <paramref name="to"/> for <paramref name="reason"/> (a <see cref="LimitChangeReason"/> name).</summary>
    [Event(FanOutEvents.LimitChangedId, Level = EventLevel.Informational, Message = "{1} limit {2} -> {3}: {4} (window median {5} ms, baseline {6} ms, {7} in flight; change {8})")]
    public void LimitChanged(string kind, string name, int from, int to, string reason, double windowMedianMs, double baselineMs, int inFlight, long sequence) =>
        WriteEvent(FanOutEvents.LimitChangedId, kind, name, from, to, reason, windowMedianMs, baselineMs, inFlight, sequence);
}
