namespace FanOut.Lab.Measurement;

/// <summary>What one measured run of a case did, measured around the run.</summary>
public sealed record RunMetrics
{
    /// <summary>Wall-clock milliseconds of the run.</summary>
    public required double ElapsedMs { get; init; }

    /// <summary>Most items in flight at once, counted around each item's work.</summary>
    public required int PeakInFlight { get; init; }

    /// <summary>Items whose work started (N when every item ran once).</summary>
    public required int ItemsStarted { get; init; }

    /// <summary>Thread-pool threads when the run started.</summary>
    public required int ThreadPoolThreadsStart { get; init; }

    /// <summary>Most thread-pool threads seen during the run (sampled).</summary>
    public required int ThreadPoolThreadsPeak { get; init; }

    /// <summary>Thread-pool threads when the run ended.</summary>
    public required int ThreadPoolThreadsEnd { get; init; }

    /// <summary>OS threads of the process when the run started.</summary>
    public required int ProcessThreadsStart { get; init; }

    /// <summary>Most OS threads seen during the run (sampled).</summary>
    public required int ProcessThreadsPeak { get; init; }

    /// <summary>OS threads when the run ended.</summary>
    public required int ProcessThreadsEnd { get; init; }

    /// <summary>Longest thread-pool queue seen during the run (sampled).</summary>
    public required long PeakQueueLength { get; init; }

    /// <summary>Thread-pool work items completed during the run.</summary>
    public required long CompletedWorkItems { get; init; }

    /// <summary>Monitor lock contentions during the run.</summary>
    public required long LockContentions { get; init; }

    /// <summary>Bytes allocated on all threads during the run, less the sampler's own.</summary>
    public required long AllocatedBytes { get; init; }

    /// <summary>Gen 0 collections during the run.</summary>
    public required int Gen0 { get; init; }

    /// <summary>Gen 1 collections during the run.</summary>
    public required int Gen1 { get; init; }

    /// <summary>Gen 2 collections during the run.</summary>
    public required int Gen2 { get; init; }

    /// <summary>Process CPU time (user + kernel, all threads) during the run.</summary>
    public required double CpuTimeMs { get; init; }

    /// <summary>What the items achieved, for workloads with a <see cref="Workloads.ICaseLifecycle"/>; null otherwise.</summary>
    public IoRunMetrics? Io { get; init; }

    /// <summary>How late other work ran during the run (heartbeat work items and timer); null when no heartbeat ran.</summary>
    public HeartbeatRunMetrics? Heartbeat { get; init; }

    /// <summary>Where the strategy's own limit stood at the end of the run (FanOut adaptive); null for fixed strategies.</summary>
    public Strategies.LimitReading? Limit { get; init; }

    /// <summary>The run over time, when the recorder was given timeline sources; null otherwise.</summary>
    public Results.Timeline? Timeline { get; init; }

    /// <summary>What the items did around the run's first failure or the caller's cancellation (seed000-errors, -cancel); null otherwise.</summary>
    public Outcomes.OutcomeRunMetrics? Outcome { get; init; }
}
