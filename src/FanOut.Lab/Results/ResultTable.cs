using System.Globalization;

namespace FanOut.Lab.Results;

/// <summary>A scenario's cases as text cells, in the style of BenchmarkDotNet's summary table; the console and report.md both draw it.</summary>
public static class ResultTable
{
    /// <summary>The column headers; <see cref="RightAligned"/> says which are numbers.</summary>
    public static IReadOnlyList<string> Headers { get; } =
    [
        "Strategy", "Parameters", "1st run", "Mean", "Error", "StdDev", "Median", "Ideal", "Eff.", "In flight",
        "Pool thr (s/p/e)", "OS thr (s/p/e)", "Queue", "Work items", "Allocated", "Gen0", "CPU", HeartbeatHeader, "Seed said",
    ];

    /// <summary>The column headers of the real-I/O table (<see cref="For"/> picks it when a scenario's cases carry <see cref="CaseResult.Io"/>).</summary>
    public static IReadOnlyList<string> IoHeaders { get; } =
    [
        "Strategy", "Parameters", "Mean", "Error", "OK", "Failed", "OK/s", "Latency p50/p95/p99", "In flight / server peak", "Server 429s",
        "DB write wait", "Pool thr (s/p/e)", "CPU", "Allocated", HeartbeatHeader,
    ];

    /// <summary>The header of the heartbeat column every table ends with: how late a 10 ms thread-pool heartbeat ran (p50 / p99 / max).</summary>
    public const string HeartbeatHeader = "Heartbeat p50/p99/max";

    /// <summary>True for the columns that hold numbers.</summary>
    public static bool RightAligned(int column) => column is >= 2 and <= 17;

    /// <summary>True for the numeric columns of the real-I/O table.</summary>
    public static bool IoRightAligned(int column) => column is >= 2 and not 5;

    /// <summary>The table for <paramref name="scenario"/>: the real-I/O columns when its cases have I/O metrics, else the seed columns.</summary>
    public static Table For(ScenarioResult scenario)
    {
        ArgumentNullException.ThrowIfNull(scenario);
        if (scenario.Cases.Any(c => c.Outcome is not null))
        {
            return OutcomeTable.For(scenario);
        }

        if (!scenario.Cases.Any(c => c.Io is not null))
        {
            return new Table(Headers, Rows(scenario), RightAligned);
        }

        var rows = scenario.Cases.Select(IoRow).ToArray();
        if (scenario.Cases.Any(c => c.Io?.WriteWaitMs is not null))
        {
            return new Table(IoHeaders, rows, IoRightAligned);
        }

        // No database in this scenario: drop the write-wait column rather than print a column of dashes.
        var writeWait = IoHeaders.ToList().IndexOf("DB write wait");
        static IReadOnlyList<string> Without(IReadOnlyList<string> cells, int column) => cells.Where((_, i) => i != column).ToArray();
        return new Table(Without(IoHeaders, writeWait), rows.Select(r => r.Count == IoHeaders.Count ? Without(r, writeWait) : r).ToArray(), IoRightAligned);
    }

    /// <summary>One row of cells per case.</summary>
    public static IReadOnlyList<IReadOnlyList<string>> Rows(ScenarioResult scenario)
    {
        ArgumentNullException.ThrowIfNull(scenario);
        return scenario.Cases.Select(Row).ToArray();
    }

    /// <summary>The cells of one case.</summary>
    public static IReadOnlyList<string> Row(CaseResult c)
    {
        ArgumentNullException.ThrowIfNull(c);
        var parameters = ParametersText(c.Parameters);
        if (!c.Succeeded)
        {
            var blank = Enumerable.Repeat("-", Headers.Count - 4);
            return [c.Strategy, parameters, .. blank, $"FAILED: {c.Error}", c.SeedSays ?? string.Empty];
        }

        return
        [
            StrategyText(c),
            parameters,
            Time(c.FirstRunMs),
            Time(c.MeanMs),
            c.ErrorMs is { } e ? Time(e) : "NA",
            Time(c.StdDevMs),
            Time(c.MedianMs),
            Time(c.IdealMs),
            double.IsFinite(c.Efficiency) ? c.Efficiency.ToString("0.00", CultureInfo.InvariantCulture) : "NA",
            Count(c.PeakInFlight),
            $"{Count(c.ThreadPoolThreadsStart)}/{Count(c.ThreadPoolThreadsPeak)}/{Count(c.ThreadPoolThreadsEnd)}",
            $"{Count(c.ProcessThreadsStart)}/{Count(c.ProcessThreadsPeak)}/{Count(c.ProcessThreadsEnd)}",
            Count(c.PeakQueueLength),
            Count(c.CompletedWorkItems),
            Bytes(c.AllocatedBytes),
            c.Gen0.ToString("0.##", CultureInfo.InvariantCulture),
            Time(c.CpuTimeMs),
            HeartbeatText(c),
            c.SeedSays ?? string.Empty,
        ];
    }

    /// <summary>The strategy's name, and where its limit settled when the limit moves: <c>FanOut (adaptive) -> 48 (peak 64)</c>.</summary>
    public static string StrategyText(CaseResult c)
    {
        ArgumentNullException.ThrowIfNull(c);
        return c.LimitFinal is { } final && c.LimitPeak is { } peak
            ? $"{c.Strategy} -> {Count(final)} (peak {Count(peak)})"
            : c.Strategy;
    }

    /// <summary>The cells of one case in the real-I/O table; a case without I/O metrics (or that failed) leaves them blank.</summary>
    public static IReadOnlyList<string> IoRow(CaseResult c)
    {
        ArgumentNullException.ThrowIfNull(c);
        var parameters = ParametersText(c.Parameters);
        if (!c.Succeeded || c.Io is not { } io)
        {
            var blank = Enumerable.Repeat("-", IoHeaders.Count - 3);
            return [c.Strategy, parameters, .. blank, c.Succeeded ? "no I/O metrics" : $"FAILED: {c.Error}"];
        }

        return
        [
            StrategyText(c),
            parameters,
            Time(c.MeanMs),
            c.ErrorMs is { } e ? Time(e) : "NA",
            Count(io.Successes),
            FailuresText(io),
            io.SuccessesPerSecond.ToString("N0", CultureInfo.InvariantCulture),
            io.ItemLatencyP50Ms is { } p50 ? $"{Time(p50)} / {Time(io.ItemLatencyP95Ms ?? p50)} / {Time(io.ItemLatencyP99Ms ?? p50)}" : "-",
            $"{Count(c.PeakInFlight)} / {(io.PeakConcurrentServed is { } peak ? Count(peak) : "-")}",
            io.Rejected429 is { } rejected ? Count(rejected) : "-",
            io.WriteWaitMs is { } wait ? Time(wait) + (io.BusyRetries is { } busy ? $" ({Count(busy)} busy)" : string.Empty) : "-",
            $"{Count(c.ThreadPoolThreadsStart)}/{Count(c.ThreadPoolThreadsPeak)}/{Count(c.ThreadPoolThreadsEnd)}",
            Time(c.CpuTimeMs),
            Bytes(c.AllocatedBytes),
            HeartbeatText(c),
        ];
    }

    /// <summary>The heartbeat cell of a case: <c>0.05 / 1.20 / 3.40 ms</c>, or <c>-</c> when not measured.</summary>
    public static string HeartbeatText(CaseResult c)
    {
        ArgumentNullException.ThrowIfNull(c);
        return c.Heartbeat?.Text() ?? "-";
    }

    /// <summary><c>0</c>, or the failures by kind: <c>1,872 x 429, 3 socket</c>.</summary>
    public static string FailuresText(IoResult io)
    {
        ArgumentNullException.ThrowIfNull(io);
        if (io.Failures == 0)
        {
            return "0";
        }

        var kinds = io.FailuresByStatus.Where(s => s.Value > 0).Select(s => $"{Count(s.Value)} x {s.Key}")
            .Concat(new[] { (io.FailuresSocket, "socket"), (io.FailuresTimeout, "timeout"), (io.FailuresOther, "other") }
                .Where(k => k.Item1 > 0).Select(k => $"{Count(k.Item1)} {k.Item2}"));
        return string.Join(", ", kinds);
    }

    /// <summary><c>N=500 delayMs=20</c>: the item count first, then the workload's parameters.</summary>
    public static string ParametersText(IReadOnlyDictionary<string, object> parameters)
    {
        ArgumentNullException.ThrowIfNull(parameters);
        return string.Join(' ', parameters.Select(p => p.Key == "itemCount" ? $"N={p.Value}" : $"{p.Key}={p.Value}"));
    }

    /// <summary>Milliseconds with units chosen like BenchmarkDotNet's: us below 1 ms, s above 10 s.</summary>
    public static string Time(double ms) => ms switch
    {
        < 1 => string.Create(CultureInfo.InvariantCulture, $"{ms * 1000:N1} us"),
        < 10_000 => string.Create(CultureInfo.InvariantCulture, $"{ms:N2} ms"),
        _ => string.Create(CultureInfo.InvariantCulture, $"{ms / 1000:N3} s"),
    };

    /// <summary>Bytes as B, KB or MB.</summary>
    public static string Bytes(double bytes) => bytes switch
    {
        < 1024 => string.Create(CultureInfo.InvariantCulture, $"{bytes:N0} B"),
        < 1024 * 1024 => string.Create(CultureInfo.InvariantCulture, $"{bytes / 1024:N1} KB"),
        _ => string.Create(CultureInfo.InvariantCulture, $"{bytes / 1024 / 1024:N1} MB"),
    };

    /// <summary>A count: whole numbers without decimals, means with one.</summary>
    public static string Count(double value) =>
        value == Math.Round(value) ? value.ToString("N0", CultureInfo.InvariantCulture) : value.ToString("N1", CultureInfo.InvariantCulture);

    /// <summary>A table ready to draw: headers, rows of cells, and which columns are numbers.</summary>
    /// <param name="Headers">Column headers.</param>
    /// <param name="Rows">One row per case.</param>
    /// <param name="RightAligned">True for numeric columns.</param>
    public sealed record Table(IReadOnlyList<string> Headers, IReadOnlyList<IReadOnlyList<string>> Rows, Func<int, bool> RightAligned);
}
