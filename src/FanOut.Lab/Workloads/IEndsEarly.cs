namespace FanOut.Lab.Workloads;

/// <summary>A workload whose run is over before its items are (an incident's script ends): a strategy that can stop taking
/// items stops once <see cref="Ended"/>, so the items left are never run.</summary>
/// <remarks>An item run after the end returns at once without its work; through an adaptive limit that reads as an answer
/// in no time, and the limit after the run would measure those non-answers instead of the downstream.</remarks>
public interface IEndsEarly
{
    /// <summary>True once the run is over: items not started by then are not run.</summary>
    bool Ended { get; }
}
