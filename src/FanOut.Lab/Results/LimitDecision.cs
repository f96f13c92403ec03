namespace FanOut.Lab.Results;

/// <summary>One change of an adaptive limit during a recorded run, with the reason the limit gave for it: an entry of a timeline's <c>decisions</c>.</summary>
/// <remarks>Read from the "FanOut" event source's <c>LimitChanged</c> event. When a run decides more than
/// <see cref="Measurement.LimitDecisionRecorder.MaxDecisions"/> times, neighbouring slow-start steps are merged into one
/// entry (<see cref="Steps"/> above 1) before anything else is given up.</remarks>
public sealed record LimitDecision
{
    /// <summary>Milliseconds since the run started when the limit became <see cref="To"/>.</summary>
    public required double TimeMs { get; init; }

    /// <summary>The limit before the change.</summary>
    public required int From { get; init; }

    /// <summary>The limit after the change.</summary>
    public required int To { get; init; }

    /// <summary>Why it changed: a <c>FanOut.LimitChangeReason</c> name (kept as text, so a reason added later still loads).</summary>
    public required string Reason { get; init; }

    /// <summary>The median latency of the window decided on, in milliseconds; 0 when none was read.</summary>
    public double WindowMedianMs { get; init; }

    /// <summary>The uncontended latency the window was compared with, in milliseconds; 0 until measured.</summary>
    public double BaselineMs { get; init; }

    /// <summary>Items in flight when it was decided.</summary>
    public int InFlight { get; init; }

    /// <summary>Changes this entry stands for: 1, or more for neighbouring slow-start steps merged to keep the list bounded.</summary>
    public int Steps { get; init; } = 1;
}
