using FanOut.Lab.Measurement;

namespace FanOut.Lab.Results;

/// <summary>The real-I/O part of a case's result: <c>io</c> in results.json, null for workloads without real I/O (the seed scenarios).</summary>
/// <remarks>Rates, latencies and times are the mean per measured run; counts are one run's (the median run's, when the
/// builder names it), so they are whole numbers that agree with each other.</remarks>
public sealed record IoResult
{
    /// <summary>Items that did their work.</summary>
    public double Successes { get; init; }

    /// <summary>All failed items.</summary>
    public double Failures { get; init; }

    /// <summary>Items answered with a non-2xx HTTP status.</summary>
    public double FailuresHttp { get; init; }

    /// <summary>Failures by HTTP status code, e.g. <c>{"429": 1872}</c>.</summary>
    public IReadOnlyDictionary<string, double> FailuresByStatus { get; init; } = new Dictionary<string, double>();

    /// <summary>Items that failed with a SocketException (connection refused or reset).</summary>
    public double FailuresSocket { get; init; }

    /// <summary>Items that hit their per-call timeout.</summary>
    public double FailuresTimeout { get; init; }

    /// <summary>Items that failed otherwise (e.g. the response ended prematurely).</summary>
    public double FailuresOther { get; init; }

    /// <summary>Median latency of successful items (client side), or null when none succeeded.</summary>
    public double? ItemLatencyP50Ms { get; init; }

    /// <summary>95th-percentile latency of successful items, or null.</summary>
    public double? ItemLatencyP95Ms { get; init; }

    /// <summary>99th-percentile latency of successful items, or null.</summary>
    public double? ItemLatencyP99Ms { get; init; }

    /// <summary>Throughput: successful items per second.</summary>
    public double SuccessesPerSecond { get; init; }

    /// <summary>The server's peak of requests served at once (its <c>peakConcurrentServed</c>), to read beside the client's <c>peakInFlight</c>; null without a server.</summary>
    public double? PeakConcurrentServed { get; init; }

    /// <summary>The server's peak of requests at its slots and queue at once (its <c>peakAtGate</c>): capacity 429s are owed only above capacity + queue; null without a server.</summary>
    public double? PeakAtGate { get; init; }

    /// <summary>The server's 429 answers (its <c>rejected429</c>); null without a server.</summary>
    public double? Rejected429 { get; init; }

    /// <summary>The server's <c>requestsServed</c>; null without a server.</summary>
    public double? RequestsServed { get; init; }

    /// <summary>Milliseconds spent in database writes per run, summed over items (SQLite's single-writer wait included); null without a database.</summary>
    public double? WriteWaitMs { get; init; }

    /// <summary>Database writes retried because the database was locked (SQLITE_BUSY); null without a database.</summary>
    public double? BusyRetries { get; init; }

    /// <summary>Milliseconds per item waited for a permit of a shared Redis limit; null without one.</summary>
    public double? PermitWaitMsPerItem { get; init; }

    /// <summary>Redis round trips per item of a shared Redis limit; null without one.</summary>
    public double? RoundTripsPerItem { get; init; }

    /// <summary>An adaptive fleet's convergence time in ms (see <see cref="Measurement.IoRunMetrics.ConvergenceMs"/>); null otherwise.</summary>
    public double? ConvergenceMs { get; init; }

    /// <summary>An adaptive fleet's lowest budget once converged; null otherwise.</summary>
    public double? BudgetLowAfterConvergence { get; init; }

    /// <summary>An adaptive fleet's highest budget once converged; null otherwise.</summary>
    public double? BudgetHighAfterConvergence { get; init; }

    /// <summary>The server's 429s once an adaptive fleet converged; null otherwise.</summary>
    public double? Rejected429AfterConvergence { get; init; }

    /// <summary>The server's answers once an adaptive fleet converged; null otherwise.</summary>
    public double? CallsAfterConvergence { get; init; }

    /// <summary>A server under open-loop load (server-overload): each load step's figures, of one run (the median one); null otherwise.</summary>
    public IReadOnlyList<LoadStepResult>? LoadSteps { get; init; }

    /// <summary>An incident's goodput from its change to its window's end, in items per second (see <see cref="Measurement.IoRunMetrics.PhaseSuccessesPerSecond"/>); null otherwise.</summary>
    public double? PhaseSuccessesPerSecond { get; init; }

    /// <summary>An incident's items that failed for good; null otherwise.</summary>
    public double? ItemsFailed { get; init; }

    /// <summary>An incident's items not sent because its script had ended; null otherwise.</summary>
    public double? ItemsNotSent { get; init; }

    /// <summary>An incident's limit at the change; null otherwise.</summary>
    public double? LimitAtChange { get; init; }

    /// <summary>An incident's limit at its window's end; null otherwise.</summary>
    public double? LimitAtEnd { get; init; }

    /// <summary>An incident's server 429s during a pause (calls sent into a Retry-After storm); null otherwise.</summary>
    public double? PauseRejected { get; init; }

    /// <summary>The means of <paramref name="runs"/>, with the counts of <paramref name="counts"/> when given (else their means too),
    /// or null when they carry no I/O metrics.</summary>
    public static IoResult? Of(IReadOnlyList<IoRunMetrics?> runs, IoRunMetrics? counts = null)
    {
        ArgumentNullException.ThrowIfNull(runs);
        if (runs.Count == 0 || runs.Any(r => r is null))
        {
            return null;
        }

        var io = runs.Select(r => r!).ToArray();
        double Mean(Func<IoRunMetrics, double> metric) => io.Average(metric);
        double? MeanOrNull(Func<IoRunMetrics, double?> metric)
        {
            var values = io.Select(metric).Where(v => v.HasValue).Select(v => v!.Value).ToArray();
            return values.Length == 0 ? null : values.Average();
        }

        double Count(Func<IoRunMetrics, double> metric) => counts is null ? Mean(metric) : metric(counts);
        double? CountOrNull(Func<IoRunMetrics, double?> metric) => counts is null ? MeanOrNull(metric) : metric(counts);
        static double Status(IoRunMetrics run, int code) => run.FailuresByStatus.TryGetValue(code, out var n) ? n : 0;

        var statuses = (counts is null ? io.SelectMany(r => r.FailuresByStatus.Keys) : counts.FailuresByStatus.Keys).Distinct().Order()
            .ToDictionary(code => code.ToString(System.Globalization.CultureInfo.InvariantCulture), code => counts is null ? io.Average(r => Status(r, code)) : Status(counts, code));
        return new IoResult
        {
            Successes = Count(r => r.Successes),
            Failures = Count(r => r.Failures),
            FailuresHttp = Count(r => r.FailuresByStatus.Values.Sum()),
            FailuresByStatus = statuses,
            FailuresSocket = Count(r => r.FailuresSocket),
            FailuresTimeout = Count(r => r.FailuresTimeout),
            FailuresOther = Count(r => r.FailuresOther),
            ItemLatencyP50Ms = MeanOrNull(r => r.LatencyP50Ms),
            ItemLatencyP95Ms = MeanOrNull(r => r.LatencyP95Ms),
            ItemLatencyP99Ms = MeanOrNull(r => r.LatencyP99Ms),
            SuccessesPerSecond = Mean(r => r.SuccessesPerSecond),
            PeakConcurrentServed = CountOrNull(r => r.PeakConcurrentServed),
            PeakAtGate = CountOrNull(r => r.PeakAtGate),
            Rejected429 = CountOrNull(r => r.Rejected429),
            RequestsServed = CountOrNull(r => r.RequestsServed),
            WriteWaitMs = MeanOrNull(r => r.WriteWaitMs),
            BusyRetries = CountOrNull(r => r.BusyRetries),
            PermitWaitMsPerItem = MeanOrNull(r => r.PermitWaitMsPerItem),
            RoundTripsPerItem = MeanOrNull(r => r.RoundTripsPerItem),
            ConvergenceMs = MeanOrNull(r => r.ConvergenceMs),
            BudgetLowAfterConvergence = MeanOrNull(r => r.BudgetLowAfterConvergence),
            BudgetHighAfterConvergence = MeanOrNull(r => r.BudgetHighAfterConvergence),
            Rejected429AfterConvergence = MeanOrNull(r => r.Rejected429AfterConvergence),
            CallsAfterConvergence = MeanOrNull(r => r.CallsAfterConvergence),
            LoadSteps = (counts ?? io[0]).LoadSteps,
            PhaseSuccessesPerSecond = MeanOrNull(r => r.PhaseSuccessesPerSecond),
            ItemsFailed = CountOrNull(r => r.ItemsFailed),
            ItemsNotSent = CountOrNull(r => r.ItemsNotSent),
            LimitAtChange = CountOrNull(r => r.LimitAtChange),
            LimitAtEnd = CountOrNull(r => r.LimitAtEnd),
            PauseRejected = CountOrNull(r => r.PauseRejected),
        };
    }
}
