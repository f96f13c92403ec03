using FanOut.Lab.Results.Columns;

namespace FanOut.Lab.Results;

/// <summary>A scenario's cases as text cells, in the style of BenchmarkDotNet's summary table, built from <see cref="ResultColumns"/>.</summary>
public static class ResultTable
{
    /// <summary>The table for <paramref name="scenario"/>: the real-I/O columns when its cases have I/O metrics, else the seed columns;
    /// every column when <paramref name="wide"/>, else the compact set meant for a 170-column console.</summary>
    public static Table For(ScenarioResult scenario, bool wide = true)
    {
        ArgumentNullException.ThrowIfNull(scenario);
        var columns = ResultColumns.For(scenario, Kind(scenario, wide));
        var isIo = IsIo(scenario);

        // A failed case shows why in the last column that would otherwise hold a number.
        var reasonColumn = columns.Select((c, i) => (c, i)).Last(x => !x.c.KeepsOnFailure).i;
        var rows = scenario.Cases.Select(c =>
        {
            var reason = !c.Succeeded ? $"FAILED: {c.Error}" : isIo && c.Io is null ? "no I/O metrics" : null;
            return (IReadOnlyList<string>)columns.Select((column, i) => reason is null || column.KeepsOnFailure ? column.Cell(c, scenario) : i == reasonColumn ? reason : "-").ToArray();
        }).ToArray();
        return new Table(columns.Select(c => c.Header!).ToArray(), rows, i => columns[i].Numeric, columns);
    }

    /// <summary>Which table a scenario gets: real-I/O columns when any case carries <see cref="CaseResult.Io"/>.</summary>
    public static ColumnTables Kind(ScenarioResult scenario, bool wide)
    {
        ArgumentNullException.ThrowIfNull(scenario);
        if (scenario.Cases.Any(c => c.Outcome is not null))
        {
            return wide ? ColumnTables.Outcome : ColumnTables.OutcomeCompact;
        }

        return (IsIo(scenario), wide) switch
        {
            (true, true) => ColumnTables.IoWide,
            (true, false) => ColumnTables.IoCompact,
            (false, true) => ColumnTables.SeedWide,
            (false, false) => ColumnTables.SeedCompact,
        };
    }

    /// <summary>The strategy's name, and where its limit settled when the limit moves: <c>FanOut (adaptive) -> 48 (peak 64)</c>.</summary>
    public static string StrategyText(CaseResult c)
    {
        ArgumentNullException.ThrowIfNull(c);
        return c.LimitFinal is { } final && c.LimitPeak is { } peak
            ? $"{c.Strategy} -> {CellText.Count(final)} (peak {CellText.Count(peak)})"
            : c.Strategy;
    }

    /// <summary><c>0</c>, or the failures by kind: <c>1,872 x 429, 3 socket</c>.</summary>
    public static string FailuresText(IoResult io)
    {
        ArgumentNullException.ThrowIfNull(io);
        if (io.Failures == 0)
        {
            return "0";
        }

        var kinds = io.FailuresByStatus.Where(s => s.Value > 0).Select(s => $"{CellText.Count(s.Value)} x {s.Key}")
            .Concat(new[] { (io.FailuresSocket, "socket"), (io.FailuresTimeout, "timeout"), (io.FailuresOther, "other") }
                .Where(k => k.Item1 > 0).Select(k => $"{CellText.Count(k.Item1)} {k.Item2}"));
        return string.Join(", ", kinds);
    }

    /// <summary><c>N=500 delayMs=20</c>: the item count first, then the workload's parameters.</summary>
    public static string ParametersText(IReadOnlyDictionary<string, object> parameters)
    {
        ArgumentNullException.ThrowIfNull(parameters);
        return string.Join(' ', parameters.Select(p => p.Key == "itemCount" ? $"N={p.Value}" : $"{p.Key}={p.Value}"));
    }

    /// <summary>Milliseconds with BenchmarkDotNet's units (see <see cref="CellText.Time"/>).</summary>
    public static string Time(double ms) => CellText.Time(ms);

    /// <summary>Bytes as B, KB or MB (see <see cref="CellText.Bytes"/>).</summary>
    public static string Bytes(double bytes) => CellText.Bytes(bytes);

    private static bool IsIo(ScenarioResult scenario) => scenario.Cases.Any(c => c.Io is not null);

    /// <summary>A table ready to draw: headers, rows of cells, which columns are numbers, and the column definitions behind them.</summary>
    /// <param name="Headers">Column headers.</param>
    /// <param name="Rows">One row per case.</param>
    /// <param name="RightAligned">True for numeric columns.</param>
    /// <param name="Columns">The definitions, one per header.</param>
    public sealed record Table(IReadOnlyList<string> Headers, IReadOnlyList<IReadOnlyList<string>> Rows, Func<int, bool> RightAligned, IReadOnlyList<ResultColumn> Columns);
}
