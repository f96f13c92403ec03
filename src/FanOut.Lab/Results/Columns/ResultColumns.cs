using System.Globalization;

using FanOut.Lab.Outcomes;

namespace FanOut.Lab.Results.Columns;

/// <summary>Every column of the results, in table and CSV order: the one list the console, results.csv, report.md and report.html read.</summary>
/// <remarks>To add a metric, add its property to <see cref="CaseResult"/> and one <see cref="ResultColumn"/> here (see docs/report.md).</remarks>
public static class ResultColumns
{
    /// <summary>The strategy, with where a moving limit settled.</summary>
    public static ResultColumn Strategy { get; } = new()
    {
        Id = "strategy",
        Header = "Strategy",
        Legend = "the fan-out strategy; for a limit that moves (FanOut adaptive), where it settled and its peak",
        Tables = ColumnTables.All,
        Numeric = false,
        KeepsOnFailure = true,
        Cell = (c, _) => ResultTable.StrategyText(c),
        Csv = [new("strategy", c => c.Strategy)],
    };

    /// <summary>Every column, in order.</summary>
    public static IReadOnlyList<ResultColumn> All { get; } =
    [
        Strategy,
        new()
        {
            Id = "workload",
            Csv = [new("workload", c => c.Workload)],
        },
        new()
        {
            Id = "parameters",
            Header = "Parameters",
            Legend = "the item count N and the workload's parameters",
            Tables = ColumnTables.Wide | ColumnTables.Outcome,
            Numeric = false,
            KeepsOnFailure = true,
            Cell = (c, _) => ResultTable.ParametersText(c.Parameters),
            Csv = [new("parameters", c => ResultTable.ParametersText(c.Parameters))],
        },
        new()
        {
            Id = "parameters-varying",
            Header = "Parameters",
            Legend = "the parameters that differ between the scenario's cases (the rest are in the scenario's heading)",
            Tables = ColumnTables.SeedCompact | ColumnTables.IoCompact | ColumnTables.OutcomeCompact,
            Numeric = false,
            KeepsOnFailure = true,
            AppliesTo = s => VaryingParameters(s).Count > 0,
            Cell = (c, s) => string.Join(' ', VaryingParameters(s).Select(k => c.Parameters.TryGetValue(k, out var v) ? (k == "itemCount" ? $"N={v}" : $"{k}={v}") : $"{k}=-")),
        },
        new()
        {
            Id = "runs",
            Csv = [new("runs", c => c.Runs), new("note", c => c.Note)],
        },
        new()
        {
            Id = "first-run",
            Header = "1st run",
            Legend = "the warm-up run in the fresh process: what a cold process pays (JIT, thread injection)",
            Tables = ColumnTables.SeedWide,
            Cell = (c, _) => CellText.Time(c.FirstRunMs),
            Csv = [new("firstRunMs", c => c.FirstRunMs)],
        },
        new()
        {
            Id = "mean",
            Header = "Mean",
            Legend = "mean wall-clock time of the measured runs",
            Tables = ColumnTables.All,
            Cell = (c, _) => CellText.Time(c.MeanMs),
            Csv = [new("meanMs", c => c.MeanMs)],
        },
        new()
        {
            Id = "error",
            Header = "Error",
            Legend = "half the 99.9% confidence interval of the mean (Student's t); NA with one run",
            Tables = ColumnTables.Seed | ColumnTables.Io | ColumnTables.Outcome,
            Cell = (c, _) => c.ErrorMs is { } e ? CellText.Time(e) : "NA",
            Csv = [new("errorMs", c => c.ErrorMs)],
        },
        new()
        {
            Id = "stddev",
            Header = "StdDev",
            Legend = "standard deviation of the measured runs",
            Tables = ColumnTables.SeedWide,
            Cell = (c, _) => CellText.Time(c.StdDevMs),
            Csv = [new("stdDevMs", c => c.StdDevMs)],
        },
        new()
        {
            Id = "median",
            Header = "Median",
            Legend = "median of the measured runs",
            Tables = ColumnTables.SeedWide,
            Cell = (c, _) => CellText.Time(c.MedianMs),
            Csv = [new("medianMs", c => c.MedianMs), new("minMs", c => c.MinMs), new("maxMs", c => c.MaxMs)],
        },
        new()
        {
            Id = "ideal",
            Header = "Ideal",
            Legend = "the best time possible at the strategy's own concurrency",
            Tables = ColumnTables.SeedWide,
            Cell = (c, _) => CellText.Time(c.IdealMs),
            Csv = [new("idealMs", c => c.IdealMs)],
        },
        new()
        {
            Id = "efficiency",
            Header = "Eff.",
            Legend = "Ideal / Mean: near 1, as fast as that concurrency allows; far below, the runtime got in the way",
            Tables = ColumnTables.Seed,
            Cell = (c, _) => CellText.Ratio(c.Efficiency),
            Csv = [new("efficiency", c => c.Efficiency), new("concurrency", c => c.Concurrency)],
        },
        new()
        {
            Id = "in-flight",
            Header = "In flight",
            Legend = "measured peak of items whose work ran at once",
            Tables = ColumnTables.Seed,
            Cell = (c, _) => CellText.Count(c.PeakInFlight),
            Csv = [new("peakInFlight", c => c.PeakInFlight), new("itemsStarted", c => c.ItemsStarted)],
        },
        new()
        {
            Id = "ok",
            Header = "OK",
            Legend = "items that succeeded",
            Tables = ColumnTables.Io,
            Cell = (c, _) => c.Io is { } io ? CellText.Count(io.Successes) : "-",
            Csv = [new("successes", c => c.Io?.Successes)],
        },
        new()
        {
            Id = "failed",
            Header = "Failed",
            Legend = "failures by kind: HTTP status, socket (SocketException), timeout, other",
            Tables = ColumnTables.Io,
            Numeric = false,
            Cell = (c, _) => c.Io is { } io ? ResultTable.FailuresText(io) : "-",
            Csv =
            [
                new("failures", c => c.Io?.Failures),
                new("failuresHttp", c => c.Io?.FailuresHttp),
                new("failuresByStatus", c => c.Io is { } io ? string.Join(' ', io.FailuresByStatus.Select(f => $"{f.Key}={f.Value.ToString("R", CultureInfo.InvariantCulture)}")) : null),
                new("failuresSocket", c => c.Io?.FailuresSocket),
                new("failuresTimeout", c => c.Io?.FailuresTimeout),
                new("failuresOther", c => c.Io?.FailuresOther),
            ],
        },
        new()
        {
            Id = "ok-per-second",
            Header = "OK/s",
            Legend = "successful items per second",
            Tables = ColumnTables.Io,
            Cell = (c, _) => c.Io is { } io ? io.SuccessesPerSecond.ToString("N0", CultureInfo.InvariantCulture) : "-",
            Csv = [new("successesPerSecond", c => c.Io?.SuccessesPerSecond)],
        },
        new()
        {
            Id = "latency",
            Header = "Latency p50/p95/p99",
            Legend = "latency of successful items, client side",
            Tables = ColumnTables.IoWide,
            Cell = (c, _) => c.Io is { ItemLatencyP50Ms: { } p50 } io ? $"{CellText.Time(p50)} / {CellText.Time(io.ItemLatencyP95Ms ?? p50)} / {CellText.Time(io.ItemLatencyP99Ms ?? p50)}" : "-",
            Csv = [new("itemLatencyP50Ms", c => c.Io?.ItemLatencyP50Ms), new("itemLatencyP95Ms", c => c.Io?.ItemLatencyP95Ms), new("itemLatencyP99Ms", c => c.Io?.ItemLatencyP99Ms)],
        },
        new()
        {
            Id = "in-flight-server",
            Header = "In flight / server peak",
            Legend = "the client's peak of calls in flight beside the server's peak of requests served at once",
            Tables = ColumnTables.Io,
            Cell = (c, _) => $"{CellText.Count(c.PeakInFlight)} / {(c.Io?.PeakConcurrentServed is { } peak ? CellText.Count(peak) : "-")}",
            Csv = [new("peakConcurrentServed", c => c.Io?.PeakConcurrentServed), new("peakAtGate", c => c.Io?.PeakAtGate)],
        },
        new()
        {
            Id = "server-429",
            Header = "Server 429s",
            Legend = "requests the server turned away",
            Tables = ColumnTables.Io,
            Cell = (c, _) => c.Io?.Rejected429 is { } rejected ? CellText.Count(rejected) : "-",
            Csv = [new("rejected429", c => c.Io?.Rejected429), new("requestsServed", c => c.Io?.RequestsServed)],
        },
        new()
        {
            Id = "incident-settle",
            Header = "Settle",
            Legend = "incidents: from the change (or a pause's end) until the limit stayed within ±25% of the phase's capacity to the window's end; never = it did not",
            Tables = ColumnTables.Io,
            AppliesTo = s => s.Cases.Any(IncidentFigures.IsIncident),
            Cell = (c, _) => c.Io is { } io && IncidentFigures.IsIncident(c) ? IncidentFigures.SettleText(io) : "-",
            Csv = [new("settleMs", c => c.Io?.ConvergenceMs), new("limitLowAfterSettling", c => c.Io?.BudgetLowAfterConvergence), new("limitHighAfterSettling", c => c.Io?.BudgetHighAfterConvergence)],
        },
        new()
        {
            Id = "incident-429-after-settle",
            Header = "429 after settling",
            Legend = "incidents: the server's 429s over its answers from the settling to the window's end",
            Tables = ColumnTables.Io,
            AppliesTo = s => s.Cases.Any(IncidentFigures.IsIncident),
            Cell = (c, _) => c.Io is { } io && IncidentFigures.IsIncident(c) ? IncidentFigures.ShareText(IncidentFigures.RejectedShareAfterSettling(io)) : "-",
            Csv = [new("rejected429AfterSettling", c => c.Io?.Rejected429AfterConvergence), new("answersAfterSettling", c => c.Io?.CallsAfterConvergence)],
        },
        new()
        {
            Id = "incident-goodput",
            Header = "Phase ok/s (vs best fixed)",
            Legend = "incidents: items that succeeded per second from the change to the window's end, and that over the same phase's Fixed(its capacity)",
            Tables = ColumnTables.Io,
            AppliesTo = s => s.Cases.Any(IncidentFigures.IsIncident),
            Cell = (c, s) => IncidentFigures.GoodputText(c, s),
            Csv = [new("phaseSuccessesPerSecond", c => c.Io?.PhaseSuccessesPerSecond), new("limitAtChange", c => c.Io?.LimitAtChange), new("limitAtEnd", c => c.Io?.LimitAtEnd), new("pauseRejected", c => c.Io?.PauseRejected)],
        },
        new()
        {
            Id = "incident-items-failed",
            Header = "Items failed",
            Legend = "incidents: items every attempt of which failed (a fixed limit never runs an item again; the default does, after an overload)",
            Tables = ColumnTables.Io,
            AppliesTo = s => s.Cases.Any(IncidentFigures.IsIncident),
            Cell = (c, _) => c.Io?.ItemsFailed is { } failed ? CellText.Count(failed) : "-",
            Csv = [new("itemsFailed", c => c.Io?.ItemsFailed), new("itemsNotSent", c => c.Io?.ItemsNotSent)],
        },
        new()
        {
            Id = "db-write-wait",
            Header = "DB write wait",
            Legend = "time items spent in SQLite writes, summed (busy = writes retried on SQLITE_BUSY)",
            Tables = ColumnTables.IoWide,
            AppliesTo = s => s.Cases.Any(c => c.Io?.WriteWaitMs is not null),
            Cell = (c, _) => c.Io?.WriteWaitMs is { } wait ? CellText.Time(wait) + (c.Io.BusyRetries is { } busy ? $" ({CellText.Count(busy)} busy)" : string.Empty) : "-",
            Csv = [new("writeWaitMs", c => c.Io?.WriteWaitMs), new("busyRetries", c => c.Io?.BusyRetries)],
        },
        new()
        {
            Id = "pool-threads",
            Header = "Pool thr (s/p/e)",
            Legend = "thread-pool threads at start / peak (sampled every 1 ms) / end",
            Tables = ColumnTables.Wide,
            Cell = (c, _) => CellText.StartPeakEnd(c.ThreadPoolThreadsStart, c.ThreadPoolThreadsPeak, c.ThreadPoolThreadsEnd),
            Csv = [new("threadPoolThreadsStart", c => c.ThreadPoolThreadsStart), new("threadPoolThreadsPeak", c => c.ThreadPoolThreadsPeak), new("threadPoolThreadsEnd", c => c.ThreadPoolThreadsEnd)],
        },
        new()
        {
            Id = "pool-threads-peak",
            Header = "Threads",
            Legend = "peak thread-pool threads (sampled every 1 ms)",
            Tables = ColumnTables.SeedCompact,
            Cell = (c, _) => CellText.Count(c.ThreadPoolThreadsPeak),
        },
        new()
        {
            Id = "os-threads",
            Header = "OS thr (s/p/e)",
            Legend = "the process's OS threads at start / peak / end",
            Tables = ColumnTables.SeedWide,
            Cell = (c, _) => CellText.StartPeakEnd(c.ProcessThreadsStart, c.ProcessThreadsPeak, c.ProcessThreadsEnd),
            Csv = [new("processThreadsStart", c => c.ProcessThreadsStart), new("processThreadsPeak", c => c.ProcessThreadsPeak), new("processThreadsEnd", c => c.ProcessThreadsEnd)],
        },
        new()
        {
            Id = "queue",
            Header = "Queue",
            Legend = "peak thread-pool queue length (sampled)",
            Tables = ColumnTables.SeedWide,
            Cell = (c, _) => CellText.Count(c.PeakQueueLength),
            Csv = [new("peakQueueLength", c => c.PeakQueueLength)],
        },
        new()
        {
            Id = "work-items",
            Header = "Work items",
            Legend = "thread-pool work items completed",
            Tables = ColumnTables.SeedWide,
            Cell = (c, _) => CellText.Count(c.CompletedWorkItems),
            Csv = [new("completedWorkItems", c => c.CompletedWorkItems), new("lockContentions", c => c.LockContentions)],
        },
        new()
        {
            Id = "allocated",
            Header = "Allocated",
            Legend = "bytes allocated on all threads",
            Tables = ColumnTables.Seed | ColumnTables.IoWide,
            Cell = (c, _) => CellText.Bytes(c.AllocatedBytes),
            Csv = [new("allocatedBytes", c => c.AllocatedBytes)],
        },
        new()
        {
            Id = "gen0",
            Header = "Gen0",
            Legend = "gen-0 collections",
            Tables = ColumnTables.SeedWide,
            Cell = (c, _) => c.Gen0.ToString("0.##", CultureInfo.InvariantCulture),
            Csv = [new("gen0", c => c.Gen0), new("gen1", c => c.Gen1), new("gen2", c => c.Gen2)],
        },
        new()
        {
            Id = "cpu",
            Header = "CPU",
            Legend = "process CPU time, user + kernel, all threads",
            Tables = ColumnTables.Wide,
            Cell = (c, _) => CellText.Time(c.CpuTimeMs),
            Csv = [new("cpuTimeMs", c => c.CpuTimeMs), new("cpuMsPerItem", c => c.CpuMsPerItem)],
        },
        new()
        {
            Id = "limit",
            Csv = [new("limitFinal", c => c.LimitFinal), new("limitPeak", c => c.LimitPeak)],
        },
        new()
        {
            Id = "outcome-started",
            Header = "Started",
            Legend = "items whose body started",
            Tables = ColumnTables.Outcomes,
            Cell = (c, _) => OutcomeCount(c, o => o.ItemsStarted),
            Csv = [new("outcomeStarted", c => c.Outcome?.ItemsStarted)],
        },
        new()
        {
            Id = "outcome-started-after",
            Header = "Started after",
            Legend = "items started after the first failure (seed000-errors) or the caller's cancellation (seed000-cancel)",
            Tables = ColumnTables.Outcomes,
            Cell = (c, _) => OutcomeCount(c, o => o.StartedAfterTrigger),
            Csv = [new("outcomeStartedAfterTrigger", c => c.Outcome?.StartedAfterTrigger)],
        },
        new()
        {
            Id = "outcome-completed",
            Header = "Completed",
            Legend = "items whose body ran to completion",
            Tables = ColumnTables.Outcomes,
            Cell = (c, _) => OutcomeCount(c, o => o.Completed),
            Csv = [new("outcomeCompleted", c => c.Outcome?.Completed)],
        },
        new()
        {
            Id = "outcome-failed",
            Header = "Failed",
            Legend = "items whose body threw",
            Tables = ColumnTables.Outcomes,
            Cell = (c, _) => OutcomeCount(c, o => o.Failed),
            Csv = [new("outcomeFailed", c => c.Outcome?.Failed)],
        },
        new()
        {
            Id = "outcome-canceled",
            Header = "Canceled",
            Legend = "items whose body ended canceled",
            Tables = ColumnTables.Outcomes,
            Cell = (c, _) => OutcomeCount(c, o => o.Canceled),
            Csv = [new("outcomeCanceled", c => c.Outcome?.Canceled)],
        },
        new()
        {
            Id = "outcome-stop-time",
            Header = "Stop time",
            Legend = "time from the failure or the cancellation to the call's completion",
            Tables = ColumnTables.Outcomes,
            Cell = (c, _) => c.Outcome?.StopMs is { } stop ? CellText.Time(stop) : "-",
            Csv = [new("outcomeStopMs", c => c.Outcome?.StopMs)],
        },
        new()
        {
            Id = "outcome-running-at-return",
            Header = "Running at return",
            Legend = "items still running when the call returned (work left behind)",
            Tables = ColumnTables.Outcomes,
            Cell = (c, _) => OutcomeCount(c, o => o.RunningAtReturn),
            Csv = [new("outcomeRunningAtReturn", c => c.Outcome?.RunningAtReturn)],
        },
        new()
        {
            Id = "outcome-final-state",
            Header = "Final state",
            Legend = "the call's task at the end: RanToCompletion, Faulted or Canceled",
            Tables = ColumnTables.Outcome,
            Numeric = false,
            Cell = (c, _) => c.Outcome?.FinalState ?? "-",
            Csv = [new("outcomeFinalState", c => c.Outcome?.FinalState)],
        },
        new()
        {
            Id = "outcome-first-failed",
            Header = "First failed",
            Legend = "the item whose failure came first in time",
            Tables = ColumnTables.Outcome,
            Numeric = false,
            Cell = (c, _) => c.Outcome is { } o ? o.FirstFailedItem ?? "-" : "-",
        },
        new()
        {
            Id = "outcome-threw",
            Header = "Await threw",
            Legend = "what `await` on the call threw",
            Tables = ColumnTables.Outcomes,
            Numeric = false,
            Cell = (c, _) => c.Outcome?.Threw ?? "-",
            Csv = [new("outcomeThrew", c => c.Outcome?.Threw)],
        },
        new()
        {
            Id = "outcome-exceptions",
            Header = "Exceptions reachable (canceled)",
            Legend = "exceptions reachable from the task (of them, cancellations)",
            Tables = ColumnTables.Outcome,
            Cell = (c, _) => c.Outcome is { } o ? $"{CellText.Count(o.ExceptionsReachable)} ({CellText.Count(o.CancellationsReachable)})" : "-",
            Csv = [new("outcomeExceptionsReachable", c => c.Outcome?.ExceptionsReachable)],
        },
        new()
        {
            Id = "outcome-failures-reachable",
            Header = "Failures reachable",
            Legend = "the items' own failures reachable from the task",
            Tables = ColumnTables.Outcome,
            Cell = (c, _) => OutcomeCount(c, o => o.FailuresReachable),
            Csv = [new("outcomeFailuresReachable", c => c.Outcome?.FailuresReachable)],
        },
        new()
        {
            Id = "outcome-by-index",
            Header = "By index",
            Legend = "failures the API ties to their item's index",
            Tables = ColumnTables.Outcome,
            Cell = (c, _) => OutcomeCount(c, o => o.FailuresIndexedByApi),
            Csv = [new("outcomeFailuresIndexedByApi", c => c.Outcome?.FailuresIndexedByApi)],
        },
        new()
        {
            Id = "heartbeat",
            Header = "Heartbeat p50/p99/max",
            Legend = "how late a tiny thread-pool work item queued every 10 ms ran during the run (p50/p99/max): how long other work waited",
            Tables = ColumnTables.Wide | ColumnTables.Outcome,
            Numeric = false,
            Cell = (c, _) => c.Heartbeat?.Text() ?? "-",
            Csv =
            [
                new("heartbeatPoolP50Ms", c => c.Heartbeat?.PoolP50Ms), new("heartbeatPoolP99Ms", c => c.Heartbeat?.PoolP99Ms), new("heartbeatPoolMaxMs", c => c.Heartbeat?.PoolMaxMs),
                new("heartbeatTimerP50Ms", c => c.Heartbeat?.TimerP50Ms), new("heartbeatTimerP99Ms", c => c.Heartbeat?.TimerP99Ms), new("heartbeatTimerMaxMs", c => c.Heartbeat?.TimerMaxMs),
            ],
        },
        new()
        {
            Id = "seed-said",
            Header = "Seed said",
            Legend = "the seed's own figure for that cell, at the seed's size, on the seed's machine",
            Tables = ColumnTables.Seed | ColumnTables.Outcome,
            Numeric = false,
            KeepsOnFailure = true,
            Cell = (c, _) => c.SeedSays ?? string.Empty,
            Csv = [new("seedSays", c => c.SeedSays), new("error", c => c.Error)],
        },
    ];

    /// <summary>The columns of <paramref name="table"/> that apply to <paramref name="scenario"/>, in order.</summary>
    public static IReadOnlyList<ResultColumn> For(ScenarioResult scenario, ColumnTables table)
    {
        ArgumentNullException.ThrowIfNull(scenario);
        return All.Where(c => c.IsIn(table) && c.AppliesTo(scenario)).ToArray();
    }

    /// <summary>The parameter names whose values differ between the cases of <paramref name="scenario"/>.</summary>
    public static IReadOnlyList<string> VaryingParameters(ScenarioResult scenario)
    {
        ArgumentNullException.ThrowIfNull(scenario);
        static string? Value(CaseResult c, string key) => c.Parameters.TryGetValue(key, out var v) ? v.ToString() : null;
        return scenario.Cases.SelectMany(c => c.Parameters.Keys).Distinct()
            .Where(k => scenario.Cases.Select(c => Value(c, k)).Distinct().Count() > 1)
            .ToArray();
    }

    private static string OutcomeCount(CaseResult c, Func<OutcomeResult, double> value) => c.Outcome is { } o ? CellText.Count(value(o)) : "-";

    /// <summary>Every CSV field, in order.</summary>
    public static IReadOnlyList<CsvField> CsvFields { get; } = All.SelectMany(c => c.Csv).ToArray();
}
