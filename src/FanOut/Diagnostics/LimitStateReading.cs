namespace FanOut.Diagnostics;

/// <summary>A limit's state as a watcher sees it (see <see cref="FanOutEvents.LimitStateId"/>).</summary>
internal readonly record struct LimitStateReading(int Limit, int InFlight, int Waiting, double LatencyMs, double BaselineMs, long Overloads, long Pauses, long Changes);
