namespace FanOut.Lab.Measurement;

/// <summary>What the items of one run of a real-I/O workload achieved: outcomes, item latency, and what the downstream saw.</summary>
/// <remarks>Collected by <see cref="Workloads.ICaseLifecycle.RunFinished"/> after the timed window, so none of it costs run time.</remarks>
public sealed record IoRunMetrics
{
    /// <summary>Items that did their work (2xx answer, row written, file hashed).</summary>
    public required long Successes { get; init; }

    /// <summary>Failed items by HTTP status code (non-2xx answers, e.g. 429).</summary>
    public required IReadOnlyDictionary<int, long> FailuresByStatus { get; init; }

    /// <summary>Failed items whose exception chain holds a <see cref="System.Net.Sockets.SocketException"/> (connection refused or reset).</summary>
    public required long FailuresSocket { get; init; }

    /// <summary>Failed items that hit their per-call timeout.</summary>
    public required long FailuresTimeout { get; init; }

    /// <summary>Failed items for any other reason (e.g. the response ended prematurely, an I/O error).</summary>
    public required long FailuresOther { get; init; }

    /// <summary>Median latency of the successful items, client side; null when none succeeded.</summary>
    public double? LatencyP50Ms { get; init; }

    /// <summary>95th-percentile latency of the successful items; null when none succeeded.</summary>
    public double? LatencyP95Ms { get; init; }

    /// <summary>99th-percentile latency of the successful items; null when none succeeded.</summary>
    public double? LatencyP99Ms { get; init; }

    /// <summary>Successful items per second of the run.</summary>
    public required double SuccessesPerSecond { get; init; }

    /// <summary>The server's <c>peakConcurrentServed</c> for the run; null without a server.</summary>
    public int? PeakConcurrentServed { get; init; }

    /// <summary>The server's <c>peakAtGate</c> for the run (served, queued or being turned away at once); null without a server.</summary>
    public int? PeakAtGate { get; init; }

    /// <summary>The server's <c>rejected429</c> (capacity + rate limit) for the run; null without a server.</summary>
    public long? Rejected429 { get; init; }

    /// <summary>The server's <c>requestsServed</c> for the run; null without a server.</summary>
    public long? RequestsServed { get; init; }

    /// <summary>Milliseconds items spent inside database writes (waiting for SQLite's single write lock included), summed; null without a database.</summary>
    public double? WriteWaitMs { get; init; }

    /// <summary>Database writes that found the database locked (SQLITE_BUSY) and were retried; null without a database.</summary>
    public long? BusyRetries { get; init; }

    /// <summary>Milliseconds per item that workers waited for a permit of a shared Redis limit (the fleet's coordination); null without one.</summary>
    public double? PermitWaitMsPerItem { get; init; }

    /// <summary>Redis round trips per item of a shared Redis limit; null without one.</summary>
    public double? RoundTripsPerItem { get; init; }

    /// <summary>An adaptive fleet's convergence: ms from the start (or the capacity change) until its budget stayed near the capacity; null otherwise.</summary>
    public double? ConvergenceMs { get; init; }

    /// <summary>An adaptive fleet's lowest budget once converged; null otherwise.</summary>
    public int? BudgetLowAfterConvergence { get; init; }

    /// <summary>An adaptive fleet's highest budget once converged; null otherwise.</summary>
    public int? BudgetHighAfterConvergence { get; init; }

    /// <summary>The server's 429s once an adaptive fleet converged; null otherwise.</summary>
    public long? Rejected429AfterConvergence { get; init; }

    /// <summary>The server's answers (served + 429) once an adaptive fleet converged; null otherwise.</summary>
    public long? CallsAfterConvergence { get; init; }

    /// <summary>A server under open-loop load (server-overload): each load step's figures, in order; null otherwise.</summary>
    public IReadOnlyList<Results.LoadStepResult>? LoadSteps { get; init; }

    /// <summary>An incident run's goodput: items that succeeded from the incident's change to its window's end, per second; null otherwise.</summary>
    public double? PhaseSuccessesPerSecond { get; init; }

    /// <summary>An incident run's items that failed for good (every attempt failed; not those cut off by the run's end); null otherwise.</summary>
    public long? ItemsFailed { get; init; }

    /// <summary>An incident run's items never sent because the script had ended; null otherwise.</summary>
    public long? ItemsNotSent { get; init; }

    /// <summary>An incident run's limit at the change; null otherwise.</summary>
    public int? LimitAtChange { get; init; }

    /// <summary>An incident run's limit at its end (read after the run, as the strategy's final limit); null otherwise.</summary>
    public int? LimitAtEnd { get; init; }

    /// <summary>An incident run's server 429s during a pause (a Retry-After storm): the calls sent into it; null otherwise.</summary>
    public long? PauseRejected { get; init; }

    /// <summary>All failed items.</summary>
    public long Failures => FailuresByStatus.Values.Sum() + FailuresSocket + FailuresTimeout + FailuresOther;
}
