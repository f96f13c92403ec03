namespace FanOut.Cli.Watch;

/// <summary>One event read from a watched process's "FanOut" event source; <see cref="Seconds"/> is the process's clock, from the session's start.</summary>
internal abstract record WatchEvent(double Seconds);

/// <summary>A limit's state at the end of an interval (counts since the limit was created).</summary>
internal sealed record LimitStateEvent(
    double Seconds, long LimitId, string Kind, string Name, int Limit, int InFlight, int Waiting, double LatencyMs, double BaselineMs, long Overloads, long Pauses, long Changes)
    : WatchEvent(Seconds);

/// <summary>A change of an adaptive limit, with the reason the law gave.</summary>
internal sealed record LimitChangedEvent(
    double Seconds, long LimitId, string Kind, string Name, int From, int To, string Reason, double WindowMedianMs, double BaselineMs, int InFlight, long Sequence)
    : WatchEvent(Seconds);

/// <summary>The end of an interval: <see cref="Limits"/> states came before it.</summary>
internal sealed record IntervalClosedEvent(double Seconds, int Limits, double IntervalSeconds) : WatchEvent(Seconds);
