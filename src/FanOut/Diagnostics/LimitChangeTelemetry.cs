using System.Diagnostics;
using System.Diagnostics.Metrics;

namespace FanOut.Diagnostics;

/// <summary>Publishes one change of an adaptive limit, with its reason, to the event source, the meter and the current activity.</summary>
/// <remarks>Called outside every lock (listeners are user code), after the limit's gauge has recorded the change.</remarks>
internal static class LimitChangeTelemetry
{
    private static readonly Counter<long> s_changes = FanOutMetrics.s_meter.CreateCounter<long>(
        FanOutInstruments.LimitChanges, "{change}", "Changes of an adaptive limit, tagged with their reason.");

    /// <summary>Publishes a change from <paramref name="from"/> to <paramref name="to"/>, the limit's <paramref name="sequence"/>-th.</summary>
    public static void Publish(string kind, string? name, int from, int to, LimitChangeReason reason, double windowMedianMs, double baselineMs, int inFlight, long sequence, long limitId = 0)
    {
        var reasonName = ReasonName(reason);
        if (s_changes.Enabled)
        {
            var kindTag = new KeyValuePair<string, object?>(FanOutInstruments.LimitKindTag, kind);
            var reasonTag = new KeyValuePair<string, object?>(FanOutInstruments.LimitReasonTag, reasonName);
            if (name is null)
            {
                s_changes.Add(1, kindTag, reasonTag);
            }
            else
            {
                s_changes.Add(1, kindTag, reasonTag, new KeyValuePair<string, object?>(FanOutInstruments.LimitNameTag, name));
            }
        }

        if (FanOutEventSource.Log.IsEnabled(System.Diagnostics.Tracing.EventLevel.Informational, FanOutEventSource.Keywords.LimitChanges))
        {
            FanOutEventSource.Log.LimitChanged(kind, name ?? kind, from, to, reasonName, windowMedianMs, baselineMs, inFlight, sequence, limitId);
        }

        if (Activity.Current is { IsAllDataRequested: true } activity)
        {
            activity.AddEvent(new ActivityEvent(FanOutActivities.LimitChangeEvent, tags: new ActivityTagsCollection
            {
                [FanOutActivities.LimitKindTag] = kind,
                [FanOutActivities.LimitNameTag] = name ?? kind,
                [FanOutActivities.LimitFromTag] = from,
                [FanOutActivities.LimitToTag] = to,
                [FanOutActivities.LimitReasonTag] = reasonName,
                [FanOutActivities.WindowMedianTag] = windowMedianMs,
                [FanOutActivities.BaselineTag] = baselineMs,
                [FanOutActivities.InFlightTag] = inFlight,
                [FanOutActivities.LimitSequenceTag] = sequence,
            }));
        }
    }

    /// <summary>The reason's name as published (no allocation: the enum's names are constants).</summary>
    internal static string ReasonName(LimitChangeReason reason) => reason switch
    {
        LimitChangeReason.Hold => nameof(LimitChangeReason.Hold),
        LimitChangeReason.SlowStartGrowth => nameof(LimitChangeReason.SlowStartGrowth),
        LimitChangeReason.QueueSeen => nameof(LimitChangeReason.QueueSeen),
        LimitChangeReason.Overload => nameof(LimitChangeReason.Overload),
        LimitChangeReason.Growth => nameof(LimitChangeReason.Growth),
        LimitChangeReason.Probe => nameof(LimitChangeReason.Probe),
        LimitChangeReason.Remeasure => nameof(LimitChangeReason.Remeasure),
        LimitChangeReason.RemeasureDone => nameof(LimitChangeReason.RemeasureDone),
        LimitChangeReason.RetryAfterPause => nameof(LimitChangeReason.RetryAfterPause),
        LimitChangeReason.PauseEnded => nameof(LimitChangeReason.PauseEnded),
        LimitChangeReason.PauseLifted => nameof(LimitChangeReason.PauseLifted),
        _ => reason.ToString(),
    };
}
