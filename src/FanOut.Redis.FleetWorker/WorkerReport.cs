namespace FanOut.Redis.FleetWorker;

/// <summary>What one worker did, printed as one JSON line on standard output (prefixed <c>report </c>).</summary>
public sealed record WorkerReport
{
    /// <summary>Items that succeeded (a 2xx answer, or a hold that completed).</summary>
    public long Ok { get; init; }

    /// <summary>Items answered with 429.</summary>
    public long Status429 { get; init; }

    /// <summary>Items that failed otherwise.</summary>
    public long Failed { get; init; }

    /// <summary>Wall-clock time of the fan-out call.</summary>
    public double ElapsedMs { get; init; }

    /// <summary>Total time workers waited for a permit that no idle lease here could serve (Redis limit only).</summary>
    public double PermitWaitMs { get; init; }

    /// <summary>Scripts the Redis limit ran (0 for a local limit).</summary>
    public long RoundTrips { get; init; }

    /// <summary>The run's failure, or null.</summary>
    public string? Error { get; init; }
}
