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

    /// <summary>Milliseconds from the run's start to the first sample; null in files written before the lab recorded it.</summary>
    public double? FirstSampleMs { get; init; }

    /// <summary>The longest time between two samples (before downsampling), or from the last sample to the run's end, in
    /// milliseconds; null in older files.</summary>
    public double? LargestGapMs { get; init; }

    /// <summary>Each change of the adaptive limit with its reason, in time order (FanOut adaptive); null for other strategies
    /// and in files written before the lab recorded them.</summary>
    public IReadOnlyList<LimitDecision>? Decisions { get; init; }

    /// <summary>Changes of the limit not kept in <see cref="Decisions"/> (beyond its bound, once slow-start steps were
    /// merged); null when the run recorded no decisions.</summary>
    public int? DecisionsDropped { get; init; }

    /// <summary>A run under this long is one whose timeline must keep up: first sample within <see cref="MaxStartMs"/>, no gap over <see cref="MaxGapMs"/>.</summary>
    public const double ShortRunMs = 1000;

    /// <summary>The latest first sample of a short run's timeline that is still "from the start".</summary>
    public const double MaxStartMs = 3;

    /// <summary>The longest gap between samples of a short run's timeline that is still "every 1 to 2 ms".</summary>
    public const double MaxGapMs = 2;

    /// <summary>Why this timeline shows less than it promises (a run under 1 s whose sampler started late or fell behind), or null when it kept up.</summary>
    public string? SamplerFellBehind()
    {
        if (RunMs >= ShortRunMs)
        {
            return null;
        }

        var late = FirstSampleMs is { } first && first > MaxStartMs ? $"first sample {first.ToString("0.0", System.Globalization.CultureInfo.InvariantCulture)} ms after the start" : null;
        var gap = LargestGapMs is { } largest && largest > MaxGapMs ? $"a gap of {largest.ToString("0.0", System.Globalization.CultureInfo.InvariantCulture)} ms between samples" : null;
        return (late, gap) switch
        {
            (null, null) => null,
            (not null, null) => $"the sampler fell behind: {late}",
            (null, not null) => $"the sampler fell behind: {gap}",
            _ => $"the sampler fell behind: {late}, {gap}",
        };
    }
}
