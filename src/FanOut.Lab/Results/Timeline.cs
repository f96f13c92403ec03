namespace FanOut.Lab.Results;

/// <summary>What one measured run (the median one) did over time: <c>timeline</c> of a case in results.json, optional.</summary>
/// <remarks>
/// Sampled every millisecond and downsampled to at most <see cref="Measurement.TimelineRecorder.MaxPoints"/> points: a
/// point covers <see cref="IntervalMs"/> and holds the peak of each gauge within it, and the count of completions and
/// 429s that happened in it. Every array has one value per point; a series that does not apply is null.
/// </remarks>
public sealed record Timeline
{
    /// <summary>Wall-clock milliseconds of the recorded run.</summary>
    public required double RunMs { get; init; }

    /// <summary>Milliseconds one point covers (the sampling interval times the downsampling factor), roughly.</summary>
    public required double IntervalMs { get; init; }

    /// <summary>Milliseconds since the run started, at the end of each point.</summary>
    public required IReadOnlyList<double> TimeMs { get; init; }

    /// <summary>Peak items in flight within each point.</summary>
    public required IReadOnlyList<int> InFlight { get; init; }

    /// <summary>Peak thread-pool threads within each point.</summary>
    public required IReadOnlyList<int> PoolThreads { get; init; }

    /// <summary>Peak OS threads of the process within each point.</summary>
    public required IReadOnlyList<int> OsThreads { get; init; }

    /// <summary>Peak thread-pool queue length within each point.</summary>
    public required IReadOnlyList<long> QueueLength { get; init; }

    /// <summary>Peak of the strategy's own limit within each point (FanOut adaptive); null for fixed strategies.</summary>
    public IReadOnlyList<int>? Limit { get; init; }

    /// <summary>Items that succeeded within each point (real I/O); null for the seed workloads.</summary>
    public IReadOnlyList<long>? Completed { get; init; }

    /// <summary>Items answered 429 within each point (real I/O against a server); null otherwise.</summary>
    public IReadOnlyList<long>? Rejected { get; init; }

    /// <summary>Peak requests the server served at once within each point; null without a server.</summary>
    public IReadOnlyList<int>? ServerInFlight { get; init; }
}
