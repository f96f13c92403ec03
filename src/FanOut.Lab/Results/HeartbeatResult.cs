using FanOut.Lab.Measurement;

namespace FanOut.Lab.Results;

/// <summary>How long other work waited during a case: <c>heartbeat</c> in results.json, the mean per measured run of each run's percentiles.</summary>
/// <remarks>A pool heartbeat is a tiny work item queued every 10 ms from outside the pool (a request arriving); the timer
/// is a 10 ms timer whose callback needs a pool thread (a timeout, a <c>Task.Delay</c>). Lateness is how long each waited
/// beyond its due time.</remarks>
public sealed record HeartbeatResult
{
    /// <summary>Pool heartbeats per run.</summary>
    public double PoolBeats { get; init; }

    /// <summary>Median lateness of a pool heartbeat, ms.</summary>
    public double PoolP50Ms { get; init; }

    /// <summary>99th-percentile lateness of a pool heartbeat, ms.</summary>
    public double PoolP99Ms { get; init; }

    /// <summary>Largest lateness of a pool heartbeat, ms.</summary>
    public double PoolMaxMs { get; init; }

    /// <summary>Timer callbacks per run.</summary>
    public double TimerBeats { get; init; }

    /// <summary>Median lateness of the timer callback, ms.</summary>
    public double TimerP50Ms { get; init; }

    /// <summary>99th-percentile lateness of the timer callback, ms.</summary>
    public double TimerP99Ms { get; init; }

    /// <summary>Largest lateness of the timer callback, ms.</summary>
    public double TimerMaxMs { get; init; }

    /// <summary>The means of <paramref name="runs"/>, or null when they carry no heartbeat.</summary>
    public static HeartbeatResult? Of(IReadOnlyList<HeartbeatRunMetrics?> runs)
    {
        ArgumentNullException.ThrowIfNull(runs);
        if (runs.Count == 0 || runs.Any(r => r is null))
        {
            return null;
        }

        var all = runs.Select(r => r!).ToArray();
        double Mean(Func<HeartbeatRunMetrics, double> metric) => all.Average(metric);
        return new HeartbeatResult
        {
            PoolBeats = Mean(r => r.PoolBeats),
            PoolP50Ms = Mean(r => r.PoolP50Ms),
            PoolP99Ms = Mean(r => r.PoolP99Ms),
            PoolMaxMs = Mean(r => r.PoolMaxMs),
            TimerBeats = Mean(r => r.TimerBeats),
            TimerP50Ms = Mean(r => r.TimerP50Ms),
            TimerP99Ms = Mean(r => r.TimerP99Ms),
            TimerMaxMs = Mean(r => r.TimerMaxMs),
        };
    }

    /// <summary>The table cell: <c>0.05 / 1.20 / 3.40 ms</c> (pool heartbeat p50 / p99 / max).</summary>
    public string Text() =>
        string.Create(System.Globalization.CultureInfo.InvariantCulture, $"{Short(PoolP50Ms)} / {Short(PoolP99Ms)} / {Short(PoolMaxMs)} ms");

    private static string Short(double ms) => ms switch
    {
        >= 100 => ms.ToString("N0", System.Globalization.CultureInfo.InvariantCulture),
        >= 10 => ms.ToString("N1", System.Globalization.CultureInfo.InvariantCulture),
        _ => ms.ToString("N2", System.Globalization.CultureInfo.InvariantCulture),
    };
}
