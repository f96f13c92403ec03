using System.Text;

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
        text.AppendLine("Columns: 1st run = the warm-up run in the fresh process (a cold thread pool); Mean/Error/StdDev/Median over the measured runs (Error = half the 99.9% confidence interval, Student's t); " +
            "Ideal = best time at the strategy's own concurrency; Eff. = Ideal / Mean; In flight = measured peak of items running at once; " +
            "Pool thr / OS thr = thread-pool and process threads at start/peak/end; Queue = peak thread-pool queue; Work items = thread-pool items completed; " +
            "Allocated = bytes on all threads; CPU = process CPU time; Heartbeat = how late a tiny thread-pool work item queued every 10 ms ran (p50/p99/max: how long other work waited). Every value is the mean per run.");
        if (results.Scenarios.Any(s => s.Cases.Any(c => c.Io is not null)))
        {
            text.AppendLine();
            text.AppendLine("Real-I/O scenarios (a loopback HTTP server, SQLite, files) have their own columns: OK = items that succeeded; Failed = failures by kind (HTTP status, socket = SocketException, timeout, other); " +
                "OK/s = successful items per second; Latency = p50/p95/p99 of successful items, client side; In flight / server peak = the client's peak of calls in flight beside the server's peak of requests served at once; " +
                "Server 429s = what the server turned away; DB write wait = time items spent in SQLite writes (busy = writes retried on SQLITE_BUSY).");
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
            text.AppendLine();
            text.AppendLine($"**Here:** {scenario.Verdict ?? "(not all cases have finished)"}");
        }

        return text.ToString();
    }

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
