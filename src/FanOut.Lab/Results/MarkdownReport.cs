using System.Text;

using FanOut.Lab.Results.Columns;

namespace FanOut.Lab.Results;

/// <summary>report.md: per scenario, the seed's claim, our table with the seed's numbers beside ours, and the verdict line.</summary>
public static class MarkdownReport
{
    /// <summary>The whole report for <paramref name="results"/>.</summary>
    public static string Write(LabResults results)
    {
        ArgumentNullException.ThrowIfNull(results);
        var text = new StringBuilder();
        var m = results.Machine;
        text.AppendLine("# FanOut lab report");
        text.AppendLine();
        text.AppendLine($"Machine: {m.Processor}, {m.ProcessorCount} logical processors, {m.Os}, {m.DotnetVersion}. Started {results.StartedAt:u}.");
        text.AppendLine($"Parallel speed-ups top out at {m.ProcessorCount}x on this machine; the seeds ran on 16 to 20 logical cores.");
        text.AppendLine();
        text.AppendLine("Columns: " + Legend(ColumnTables.SeedWide) + ". Every value is the mean per run.");
        if (results.Scenarios.Any(s => s.Cases.Any(c => c.Io is not null)))
        {
            text.AppendLine();
            text.AppendLine("Real-I/O scenarios (a loopback HTTP server, SQLite, files) have their own columns: " + Legend(ColumnTables.IoWide, ColumnTables.SeedWide) + ".");
        }

        foreach (var scenario in results.Scenarios)
        {
            text.AppendLine();
            text.AppendLine($"## {scenario.Id}");
            text.AppendLine();
            text.AppendLine($"Seed `{scenario.Seed}` ({scenario.SeedMachine}) said: {scenario.SeedClaim}");
            text.AppendLine();
            text.AppendLine($"Scale {scenario.Scale:0.###}{(scenario.Full ? ", the seed's full grid" : string.Empty)}.");
            text.AppendLine();
            AppendTable(text, ResultTable.For(scenario));
            foreach (var note in scenario.Cases.Where(c => c.Note is not null))
            {
                text.AppendLine();
                text.AppendLine($"{note.Strategy} ({ResultTable.ParametersText(note.Parameters)}): {note.Note}");
            }

            text.AppendLine();
            text.AppendLine($"**Here:** {scenario.Verdict ?? "(not all cases have finished)"}");
        }

        return text.ToString();
    }

    /// <summary>"Header = legend; ..." for the columns of <paramref name="table"/>, leaving out those already in <paramref name="explained"/>.</summary>
    private static string Legend(ColumnTables table, ColumnTables explained = ColumnTables.None) =>
        string.Join("; ", ResultColumns.All.Where(c => c.IsIn(table) && !c.IsIn(explained) && c.Legend is not null).Select(c => $"{c.Header} = {c.Legend}"));

    private static void AppendTable(StringBuilder text, ResultTable.Table table)
    {
        text.AppendLine("| " + string.Join(" | ", table.Headers) + " |");
        text.AppendLine("|" + string.Join("|", table.Headers.Select((_, i) => table.RightAligned(i) ? "---:" : "---")) + "|");
        foreach (var row in table.Rows)
        {
            text.AppendLine("| " + string.Join(" | ", row.Select(cell => cell.Replace("|", "\\|", StringComparison.Ordinal))) + " |");
        }
    }
}
