using System.Text.Json.Serialization;

namespace FanOut.Lab.Probing;

/// <summary>One concurrency level as measured: an entry of <c>levels[]</c> in probe.json.</summary>
public sealed record LevelResult
{
    /// <summary>Workers in the closed loop (each sends its next request when its last one is answered).</summary>
    public required int Concurrency { get; init; }

    /// <summary>Requests answered or failed during the level (cancelled ones are not counted).</summary>
    public required long Requests { get; init; }

    /// <summary>Answers with a status below 400.</summary>
    public required long Ok { get; init; }

    /// <summary>Failures by kind: the HTTP status code (<c>"429"</c>, <c>"503"</c>, ...), <c>"timeout"</c> or <c>"socket"</c>.</summary>
    public required IReadOnlyDictionary<string, long> Failures { get; init; }

    /// <summary>Ok answers per second of the level: the sum of each worker's ok answers over its own time to its last answer.</summary>
    public required double OkPerSecond { get; init; }

    /// <summary>Median latency of the ok answers, client side; null when none.</summary>
    public double? LatencyP50Ms { get; init; }

    /// <summary>95th-percentile latency of the ok answers; null when none.</summary>
    public double? LatencyP95Ms { get; init; }

    /// <summary>99th-percentile latency of the ok answers; null when none.</summary>
    public double? LatencyP99Ms { get; init; }

    /// <summary>Mean latency of the ok answers; null when none.</summary>
    public double? LatencyMeanMs { get; init; }

    /// <summary>Standard deviation of the ok answers' latencies; null when fewer than two.</summary>
    public double? LatencyStdDevMs { get; init; }

    /// <summary>Little's law: requests per second times their mean latency, the concurrency the server really saw.</summary>
    /// <remarks>Near <see cref="Concurrency"/> when the client kept every worker busy; well below it when the client
    /// itself was the bottleneck.</remarks>
    public required double LittleConcurrency { get; init; }

    /// <summary>Little's law on the ok answers alone: ok/s times their mean latency, the requests the server was serving
    /// at once. At a level above a capacity that rejects the rest, it is the capacity.</summary>
    public double OkLittleConcurrency { get; init; }

    /// <summary>Seconds the level took, from its first send to its last answer.</summary>
    public required double Seconds { get; init; }

    /// <summary>How the level ended: <c>measured</c>, <c>max-requests</c>, <c>duration</c> or <c>interrupted</c>.</summary>
    public required string EndedBy { get; init; }

    /// <summary>Why the probe went no higher after this level, or null when it went on.</summary>
    public string? StopReason { get; init; }

    /// <summary>Rejections (429 and 503) whose answer named a rate: <c>Retry-After</c>, <c>RateLimit-*</c>, <c>X-RateLimit-*</c>.</summary>
    public long RateLimitHeaders { get; init; }

    /// <summary>Ok answers per second from one p99 latency after the level's first rejection to its end: once a token
    /// bucket's burst is spent (and the answers it paid for are in), the rate it lets through. Null when nothing was rejected.</summary>
    public double? OkPerSecondWhileRejecting { get; init; }

    /// <summary>Answers 429 or 503: the server said it was overloaded.</summary>
    [JsonIgnore]
    public long Rejections => Count("429") + Count("503");

    /// <summary>Every failure, of any kind.</summary>
    [JsonIgnore]
    public long FailureCount => Failures.Values.Sum();

    /// <summary>The failures of <paramref name="kind"/>, 0 when none.</summary>
    public long Count(string kind) => Failures.TryGetValue(kind, out var count) ? count : 0;
}
