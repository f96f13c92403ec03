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
    /// <c>inFlight</c> (int) and <c>sequence</c> (long: 1 for the limit's first change, then one more per change). Changes are
    /// published outside the limit's lock, so two threads' changes may reach a listener out of order: the sequence orders them.
    /// </summary>
    public const int LimitChangedId = 1;

    /// <summary>The event name of <see cref="LimitChangedId"/>.</summary>
    public const string LimitChanged = "LimitChanged";
}
