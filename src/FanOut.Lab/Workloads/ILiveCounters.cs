namespace FanOut.Lab.Workloads;

/// <summary>Counters of a real-I/O workload that the timeline sampler reads every millisecond during a run.</summary>
/// <remarks>Reads must be cheap, lock-free and allocation-free: they run on the sampler thread while the run is timed.</remarks>
public interface ILiveCounters
{
    /// <summary>Items that succeeded so far in this run.</summary>
    long CompletedNow { get; }

    /// <summary>Items answered 429 so far in this run; null when the workload has no HTTP downstream.</summary>
    long? RejectedNow { get; }

    /// <summary>Requests the downstream is serving right now; null without a server.</summary>
    int? ServerInFlightNow { get; }
}
