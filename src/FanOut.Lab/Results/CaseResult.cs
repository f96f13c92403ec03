using System.Text.Json.Serialization;

namespace FanOut.Lab.Results;

/// <summary>One case's outcome: the row of a results table and the element of <c>scenarios[].cases[]</c> in results.json.</summary>
/// <remarks>Every per-run metric is the mean over the measured runs. A case that could not run carries
/// <see cref="Error"/> and zero runs; its numbers are then meaningless and reports leave them blank.</remarks>
public sealed record CaseResult
{
    /// <summary>Strategy display name.</summary>
    public required string Strategy { get; init; }

    /// <summary>Workload display name.</summary>
    public required string Workload { get; init; }

    /// <summary>Item count and workload parameters.</summary>
    public required IReadOnlyDictionary<string, object> Parameters { get; init; }

    /// <summary>Measured runs.</summary>
    public int Runs { get; init; }

    /// <summary>The first, unmeasured (warm-up) run in the fresh process: what a cold process pays, e.g. for thread-pool starvation.</summary>
    public double FirstRunMs { get; init; }

    /// <summary>Mean wall-clock time per run.</summary>
    public double MeanMs { get; init; }

    /// <summary>Half of the 99.9% confidence interval of the mean; null with fewer than two runs.</summary>
    public double? ErrorMs { get; init; }

    /// <summary>Sample standard deviation.</summary>
    public double StdDevMs { get; init; }

    /// <summary>Median.</summary>
    public double MedianMs { get; init; }

    /// <summary>Fastest run.</summary>
    public double MinMs { get; init; }

    /// <summary>Slowest run.</summary>
    public double MaxMs { get; init; }

    /// <summary>Best possible time at the strategy's concurrency (see IdealTime).</summary>
    public double IdealMs { get; init; }

    /// <summary>IdealMs / MeanMs.</summary>
    public double Efficiency { get; init; }

    /// <summary>The concurrency the ideal model assumed (D).</summary>
    public int Concurrency { get; init; }

    /// <summary>Measured CPU milliseconds of one item alone (0 when the workload only waits).</summary>
    public double CpuMsPerItem { get; init; }

    /// <summary>Mean peak of items in flight.</summary>
    public double PeakInFlight { get; init; }

    /// <summary>Mean items started per run (equals the item count when every item ran once).</summary>
    public double ItemsStarted { get; init; }

    /// <summary>Mean thread-pool threads at start.</summary>
    public double ThreadPoolThreadsStart { get; init; }

    /// <summary>Mean thread-pool threads at peak.</summary>
    public double ThreadPoolThreadsPeak { get; init; }

    /// <summary>Mean thread-pool threads at end.</summary>
    public double ThreadPoolThreadsEnd { get; init; }

    /// <summary>Mean OS threads at start.</summary>
    public double ProcessThreadsStart { get; init; }

    /// <summary>Mean OS threads at peak.</summary>
    public double ProcessThreadsPeak { get; init; }

    /// <summary>Mean OS threads at end.</summary>
    public double ProcessThreadsEnd { get; init; }

    /// <summary>Mean peak thread-pool queue length.</summary>
    public double PeakQueueLength { get; init; }

    /// <summary>Mean thread-pool work items completed.</summary>
    public double CompletedWorkItems { get; init; }

    /// <summary>Mean lock contentions.</summary>
    public double LockContentions { get; init; }

    /// <summary>Mean bytes allocated.</summary>
    public double AllocatedBytes { get; init; }

    /// <summary>Mean gen 0 collections.</summary>
    public double Gen0 { get; init; }

    /// <summary>Mean gen 1 collections.</summary>
    public double Gen1 { get; init; }

    /// <summary>Mean gen 2 collections.</summary>
    public double Gen2 { get; init; }

    /// <summary>Mean process CPU time.</summary>
    public double CpuTimeMs { get; init; }

    /// <summary>Outcomes, item latency, throughput and the server's view, for real-I/O workloads; null for the seed scenarios.</summary>
    public IoResult? Io { get; init; }

    /// <summary>How late other work ran during the case: thread-pool heartbeats and a timer, every 10 ms; null when not measured.</summary>
    public HeartbeatResult? Heartbeat { get; init; }

    /// <summary>What the items did around the first failure or the caller's cancellation, for seed000-errors and -cancel; null otherwise.</summary>
    public Outcomes.OutcomeResult? Outcome { get; init; }

    /// <summary>Mean limit at the end of a run, for strategies whose limit moves (FanOut adaptive); null otherwise.</summary>
    public double? LimitFinal { get; init; }

    /// <summary>Mean of the highest limit reached in a run, for strategies whose limit moves; null otherwise.</summary>
    public double? LimitPeak { get; init; }

    /// <summary>The median measured run over time (in flight, threads, queue, limit, completions); null in files written before timelines.</summary>
    public Timeline? Timeline { get; init; }

    /// <summary>Why the case ran fewer times than the others (e.g. measured once because a run takes many seconds), or null.</summary>
    public string? Note { get; init; }

    /// <summary>What the seed published for this cell, or null.</summary>
    public string? SeedSays { get; init; }

    /// <summary>Why the case has no numbers (refused, crashed, timed out), or null when it ran.</summary>
    public string? Error { get; init; }

    /// <summary>True when the case ran and has numbers.</summary>
    [JsonIgnore]
    public bool Succeeded => Error is null && Runs > 0;

    /// <summary>A result for a case that could not run.</summary>
    public static CaseResult Failed(string strategy, string workload, IReadOnlyDictionary<string, object> parameters, string error, string? seedSays = null) =>
        new() { Strategy = strategy, Workload = workload, Parameters = parameters, Error = error, SeedSays = seedSays };
}
