using FanOut.Downstream.Control;

namespace FanOut.Lab.Workloads.RealIo;

/// <summary>One incident a downstream goes through while a fan-out calls it: changes at set times from the run's start, and the
/// window the incident is judged in.</summary>
/// <param name="Name">The incident's short name, e.g. <c>halved</c> (the <c>phase</c> parameter of its rows).</param>
/// <param name="Steps">The changes, in time order; the first, at 0 ms, sets the server's state at the start of every run.</param>
/// <param name="ChangeMs">When the incident starts (ms from the run's start): goodput is counted from here.</param>
/// <param name="SettleFromMs">From when the limit is expected to settle near <paramref name="Capacity"/> (the change itself, or the
/// end of a pause such as a Retry-After storm).</param>
/// <param name="EndMs">The end of the judged window and of the run: items not started by then are not sent.</param>
/// <param name="Capacity">The capacity in the judged window, against which the limit's settling is read: the best fixed limit.</param>
/// <param name="Mistuned">A fixed limit tuned for another phase (the healthy capacity, say), the row that shows what a static guess costs.</param>
public sealed record IncidentScript(string Name, IReadOnlyList<IncidentStep> Steps, double ChangeMs, double SettleFromMs, double EndMs, int Capacity, int Mistuned)
{
    /// <summary>The settle band's floor, times <see cref="Capacity"/> (issue 29: within ±25% of the new capacity).</summary>
    public const double BandLow = 0.75;

    /// <summary>The settle band's ceiling, times <see cref="Capacity"/>.</summary>
    public const double BandHigh = 1.25;

    /// <summary>The most requests per second the script asks the server to serve at any time (capacity / mean latency, plus the
    /// retries of a storm), for sizing the item count so the items outlast the script.</summary>
    public double PeakServedPerSecond { get; init; }
}

/// <summary>A change applied <paramref name="AtMs"/> ms after the run's start.</summary>
public sealed record IncidentStep(double AtMs, DownstreamChange Change);
