using System.Globalization;

using FanOut.Lab.Probing;

using Spectre.Console;

namespace FanOut.Cli.Output;

/// <summary>The end of a probe on the console: the level table, the capacity, the USL fit with its band, the open-loop
/// check, the recommendation and (only when final) its code.</summary>
public static class ProbeSummary
{
    private static readonly string[] s_headers = ["Concurrency", "Requests", "Ok", "Failures", "Ok/s", "p50", "p95", "p99", "X*R", "X*R0", "Seconds", "Note"];

    /// <summary>Writes the summary of <paramref name="report"/>, saved at <paramref name="path"/>.</summary>
    public static void Write(IAnsiConsole console, ProbeReport report, string path)
    {
        ArgumentNullException.ThrowIfNull(console);
        ArgumentNullException.ThrowIfNull(report);
        console.WriteLine();
        var r0 = report.Capacity?.UnqueuedLatencyMs;
        var rows = report.Levels.Select(l => (IReadOnlyList<string>)
        [
            l.Concurrency.ToString(CultureInfo.InvariantCulture),
            l.Requests.ToString("N0", CultureInfo.InvariantCulture),
            l.Ok.ToString("N0", CultureInfo.InvariantCulture),
            FailuresText(l),
            ProbeText.Rate(l.OkPerSecond),
            ProbeText.Ms(l.LatencyP50Ms),
            ProbeText.Ms(l.LatencyP95Ms),
            ProbeText.Ms(l.LatencyP99Ms),
            l.OkLittleConcurrency.ToString("0.0", CultureInfo.InvariantCulture),
            r0 is { } unqueued ? (l.OkPerSecond * unqueued / 1000).ToString("0.0", CultureInfo.InvariantCulture) : "n/a",
            l.Seconds.ToString("0.0", CultureInfo.InvariantCulture),
            l.StopReason ?? (l.EndedBy == LevelEnd.Measured ? string.Empty : l.EndedBy),
        ]).ToArray();
        console.WriteLine(TextTable.Render(s_headers, rows, i => i is > 0 and < 11 && i != 3));
        console.WriteLine("X*R: ok/s times the ok answers' mean latency (Little's law), the requests the server was serving at once.");
        if (r0 is { } r)
        {
            console.WriteLine($"X*R0: ok/s times the unqueued latency R0 = {ProbeText.Ms(r)}, the requests the server completed as if none waited; beyond a queueing server's capacity it is the capacity.");
        }

        if (report.Capacity is { } capacity)
        {
            console.WriteLine(ProbeText.CapacityLine(capacity));
        }

        foreach (var line in ProbeText.UslLines(report))
        {
            console.WriteLine(line);
        }

        if (report.OpenLoop is { } open)
        {
            console.WriteLine();
            console.WriteLine($"Open-loop check: {ProbeText.Rate(open.ArrivalsPerSecond)} arrivals/s at a constant rate, at most {open.Limit.ToString(CultureInfo.InvariantCulture)} in flight, {open.Sent.ToString("N0", CultureInfo.InvariantCulture)} sent in {open.Seconds.ToString("0.0", CultureInfo.InvariantCulture)} s: {open.Verdict}.");
            console.WriteLine(TextTable.Render(
                ["Latency", "p50", "p99"],
                [
                    ["open loop, from the intended start (coordinated omission corrected)", ProbeText.Ms(open.LatencyP50Ms), ProbeText.Ms(open.LatencyP99Ms)],
                    ["open loop, from the send", ProbeText.Ms(open.ServiceP50Ms), ProbeText.Ms(open.ServiceP99Ms)],
                    ["closed loop at the same limit", string.Empty, ProbeText.Ms(open.ClosedLoopP99Ms)],
                ],
                i => i > 0));
        }

        var recommendation = report.Recommendation;
        console.WriteLine();
        console.WriteLine(ProbeText.Headline(recommendation));
        console.WriteLine($"Why: {recommendation.Reason}.");
        if (recommendation.Code is { } code)
        {
            console.WriteLine();
            console.WriteLine("FanOut:");
            console.WriteLine(Indent(code.FanOut));
            console.WriteLine("Parallel.ForEachAsync:");
            console.WriteLine(Indent(code.ParallelForEachAsync));
            console.WriteLine("SemaphoreSlim:");
            console.WriteLine(Indent(code.SemaphoreSlim));
        }
        else
        {
            console.WriteLine("No code to paste: the probe could not confirm a limit.");
        }

        console.WriteLine();
        var budget = report.MaxRequests is { } max ? $" of a budget of {max.ToString("N0", CultureInfo.InvariantCulture)}" : string.Empty;
        console.WriteLine($"{report.RequestsSent.ToString("N0", CultureInfo.InvariantCulture)} requests{budget} in {report.Seconds.ToString("0.0", CultureInfo.InvariantCulture)} s ({report.EndedBy}). Wrote {path}");
    }

    /// <summary>A level's failures as "none" or "429 x120, timeout x3".</summary>
    public static string FailuresText(LevelResult level)
    {
        ArgumentNullException.ThrowIfNull(level);
        return level.Failures.Count == 0 ? "none" : string.Join(", ", level.Failures.Select(f => $"{f.Key} x{f.Value.ToString("N0", CultureInfo.InvariantCulture)}"));
    }

    private static string Indent(string code) => string.Join('\n', code.Split('\n').Select(line => "    " + line));
}
