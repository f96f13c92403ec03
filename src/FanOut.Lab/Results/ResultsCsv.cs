using System.Globalization;
using System.Text;

namespace FanOut.Lab.Results;

/// <summary>results.csv: one line per case, every metric in its own column, raw numbers (ms, bytes) for spreadsheets.</summary>
public static class ResultsCsv
{
    private static readonly string[] s_columns =
    [
        "scenario", "strategy", "workload", "parameters", "runs", "firstRunMs", "meanMs", "errorMs", "stdDevMs", "medianMs", "minMs", "maxMs",
        "idealMs", "efficiency", "concurrency", "peakInFlight", "threadPoolThreadsStart", "threadPoolThreadsPeak", "threadPoolThreadsEnd",
        "processThreadsStart", "processThreadsPeak", "processThreadsEnd", "peakQueueLength", "completedWorkItems", "lockContentions",
        "allocatedBytes", "gen0", "gen1", "gen2", "cpuTimeMs", "limitFinal", "limitPeak", "seedSays", "error",

        // Real-I/O columns, empty for the seed scenarios.
        "successes", "failures", "failuresHttp", "failuresByStatus", "failuresSocket", "failuresTimeout", "failuresOther",
        "itemLatencyP50Ms", "itemLatencyP95Ms", "itemLatencyP99Ms", "successesPerSecond", "peakConcurrentServed", "rejected429", "requestsServed",
        "writeWaitMs", "busyRetries",

        // Heartbeat lateness (every scenario), then the error/cancel outcome (seed000-errors and -cancel only).
        "heartbeatPoolP50Ms", "heartbeatPoolP99Ms", "heartbeatPoolMaxMs", "heartbeatTimerP50Ms", "heartbeatTimerP99Ms", "heartbeatTimerMaxMs",
        "outcomeStarted", "outcomeStartedAfterTrigger", "outcomeCompleted", "outcomeFailed", "outcomeCanceled", "outcomeStopMs", "outcomeRunningAtReturn",
        "outcomeFinalState", "outcomeThrew", "outcomeExceptionsReachable", "outcomeFailuresReachable", "outcomeFailuresIndexedByApi",
    ];

    /// <summary>The whole file for <paramref name="results"/>.</summary>
    public static string Write(LabResults results)
    {
        ArgumentNullException.ThrowIfNull(results);
        var text = new StringBuilder();
        text.AppendLine(string.Join(',', s_columns));
        foreach (var scenario in results.Scenarios)
        {
            foreach (var c in scenario.Cases)
            {
                object?[] values =
                [
                    scenario.Id, c.Strategy, c.Workload, ResultTable.ParametersText(c.Parameters), c.Runs, c.FirstRunMs, c.MeanMs, c.ErrorMs, c.StdDevMs, c.MedianMs, c.MinMs, c.MaxMs,
                    c.IdealMs, c.Efficiency, c.Concurrency, c.PeakInFlight, c.ThreadPoolThreadsStart, c.ThreadPoolThreadsPeak, c.ThreadPoolThreadsEnd,
                    c.ProcessThreadsStart, c.ProcessThreadsPeak, c.ProcessThreadsEnd, c.PeakQueueLength, c.CompletedWorkItems, c.LockContentions,
                    c.AllocatedBytes, c.Gen0, c.Gen1, c.Gen2, c.CpuTimeMs, c.LimitFinal, c.LimitPeak, c.SeedSays, c.Error,
                    c.Io?.Successes, c.Io?.Failures, c.Io?.FailuresHttp, c.Io is { } io ? string.Join(' ', io.FailuresByStatus.Select(f => $"{f.Key}={f.Value.ToString("R", CultureInfo.InvariantCulture)}")) : null,
                    c.Io?.FailuresSocket, c.Io?.FailuresTimeout, c.Io?.FailuresOther,
                    c.Io?.ItemLatencyP50Ms, c.Io?.ItemLatencyP95Ms, c.Io?.ItemLatencyP99Ms, c.Io?.SuccessesPerSecond, c.Io?.PeakConcurrentServed, c.Io?.Rejected429, c.Io?.RequestsServed,
                    c.Io?.WriteWaitMs, c.Io?.BusyRetries,
                    c.Heartbeat?.PoolP50Ms, c.Heartbeat?.PoolP99Ms, c.Heartbeat?.PoolMaxMs, c.Heartbeat?.TimerP50Ms, c.Heartbeat?.TimerP99Ms, c.Heartbeat?.TimerMaxMs,
                    c.Outcome?.ItemsStarted, c.Outcome?.StartedAfterTrigger, c.Outcome?.Completed, c.Outcome?.Failed, c.Outcome?.Canceled, c.Outcome?.StopMs, c.Outcome?.RunningAtReturn,
                    c.Outcome?.FinalState, c.Outcome?.Threw, c.Outcome?.ExceptionsReachable, c.Outcome?.FailuresReachable, c.Outcome?.FailuresIndexedByApi,
                ];
                text.AppendLine(string.Join(',', values.Select(Field)));
            }
        }

        return text.ToString();
    }

    /// <summary>One field, quoted when it holds a comma, a quote or a line break (RFC 4180).</summary>
    public static string Field(object? value)
    {
        var text = value switch
        {
            null => string.Empty,
            double d => d.ToString("R", CultureInfo.InvariantCulture),
            IFormattable f => f.ToString(null, CultureInfo.InvariantCulture),
            _ => value.ToString() ?? string.Empty,
        };
        return text.AsSpan().IndexOfAny(",\"\r\n") >= 0 ? $"\"{text.Replace("\"", "\"\"", StringComparison.Ordinal)}\"" : text;
    }
}
