using FanOut.Lab.Workloads.RealIo;

namespace FanOut.Lab.Probing;

/// <summary>What one worker of a level saw; each worker owns one, so recording takes no lock.</summary>
internal sealed class LevelRecorder
{
    private readonly Dictionary<string, long> _failures = [];

    /// <summary>Latencies of ok answers, milliseconds.</summary>
    public List<double> OkLatencies { get; } = [];

    /// <summary>When each ok answer arrived (timestamps of the level's <see cref="TimeProvider"/>).</summary>
    public List<long> OkTimestamps { get; } = [];

    /// <summary>Sum of the latencies of every answered or failed request, milliseconds.</summary>
    public double LatencySumMs { get; private set; }

    /// <summary>When this worker's last request ended (timestamp of the level's <see cref="TimeProvider"/>); null when none.</summary>
    public long? LastTimestamp { get; private set; }

    /// <summary>Requests answered or failed.</summary>
    public long Requests { get; private set; }

    /// <summary>When this worker's first rejection (429/503) arrived; null when none.</summary>
    public long? FirstRejection { get; private set; }

    /// <summary>Rejections that named a rate limit.</summary>
    public long RateLimitHeaders { get; private set; }

    /// <summary>Failures by kind.</summary>
    public IReadOnlyDictionary<string, long> Failures => _failures;

    /// <summary>Records one finished request.</summary>
    public void Record(SendOutcome outcome, double latencyMs, long timestamp)
    {
        Requests++;
        LatencySumMs += latencyMs;
        LastTimestamp = timestamp;
        if (outcome.Ok)
        {
            OkLatencies.Add(latencyMs);
            OkTimestamps.Add(timestamp);
            return;
        }

        var kind = outcome.FailureKind!;
        _failures[kind] = (_failures.TryGetValue(kind, out var count) ? count : 0) + 1;
        if (outcome.IsRejection)
        {
            FirstRejection ??= timestamp;
        }

        if (outcome.NamesRateLimit)
        {
            RateLimitHeaders++;
        }
    }

    /// <summary>Merges every worker's record into the level's result.</summary>
    /// <remarks>Ok/s is the sum of each worker's own rate, its ok answers over the time to its last answer: the level
    /// waits for its slowest worker's last answer, and dividing every worker's answers by that tail (up to one latency,
    /// a large share of a short level of a slow endpoint) would understate the rate.</remarks>
    public static LevelResult Merge(int concurrency, IReadOnlyList<LevelRecorder> workers, long startTimestamp, double seconds, TimeProvider time, string endedBy)
    {
        var latencies = workers.SelectMany(w => w.OkLatencies).ToArray();
        Array.Sort(latencies);
        var failures = new SortedDictionary<string, long>(StringComparer.Ordinal);
        foreach (var (kind, count) in workers.SelectMany(w => w.Failures))
        {
            failures[kind] = (failures.TryGetValue(kind, out var sum) ? sum : 0) + count;
        }

        var requests = workers.Sum(w => w.Requests);
        var ok = latencies.LongLength;
        var p99 = ItemOutcomes.Percentile(latencies, 0.99);
        var firstRejection = workers.Select(w => w.FirstRejection).Where(t => t is not null).Min();
        double? whileRejecting = null;
        if (firstRejection is { } rejectedAt)
        {
            // The requests in flight at the first rejection were paid for by the burst and answer up to a latency later:
            // counting from one p99 latency after it leaves only answers the refill paid for (docs/probe.md, step 5). A
            // level too short to reach past that latency counts from the rejection.
            var settled = rejectedAt + (long)(p99.GetValueOrDefault() / 1000.0 * time.TimestampFrequency);
            var from = seconds > time.GetElapsedTime(startTimestamp, settled).TotalSeconds ? settled : rejectedAt;
            var span = seconds - time.GetElapsedTime(startTimestamp, from).TotalSeconds;
            var okAfter = workers.SelectMany(w => w.OkTimestamps).Count(t => t >= from);
            whileRejecting = span > 0 ? okAfter / span : null;
        }
        var latencySum = workers.Sum(w => w.LatencySumMs);
        double? mean = ok > 0 ? latencies.Average() : null;
        double? deviation = ok > 1 ? Math.Sqrt(latencies.Sum(l => (l - mean!.Value) * (l - mean.Value)) / (ok - 1)) : null;
        var okPerSecond = workers.Where(w => w.LastTimestamp is not null).Sum(w =>
        {
            var busy = time.GetElapsedTime(startTimestamp, w.LastTimestamp!.Value).TotalSeconds;
            return busy > 0 ? w.OkLatencies.Count / busy : 0;
        });
        return new LevelResult
        {
            Concurrency = concurrency,
            Requests = requests,
            Ok = ok,
            Failures = failures,
            OkPerSecond = okPerSecond,
            LatencyP50Ms = ItemOutcomes.Percentile(latencies, 0.50),
            LatencyP95Ms = ItemOutcomes.Percentile(latencies, 0.95),
            LatencyP99Ms = p99,
            LatencyMeanMs = mean,
            LatencyStdDevMs = deviation,
            OkLittleConcurrency = okPerSecond * (mean ?? 0) / 1000.0,
            LittleConcurrency = seconds > 0 ? latencySum / 1000.0 / seconds : 0,
            Seconds = seconds,
            EndedBy = endedBy,
            RateLimitHeaders = workers.Sum(w => w.RateLimitHeaders),
            OkPerSecondWhileRejecting = whileRejecting,
        };
    }
}
