using System.Globalization;

using FanOut.Lab.Probing;

using Spectre.Console;

namespace FanOut.Cli.Output;

/// <summary>The end of a probe on the console: the level table, the USL fit, the recommendation and its code.</summary>
public static class ProbeSummary
{
    private static readonly string[] s_headers = ["Concurrency", "Requests", "Ok", "Failures", "Ok/s", "p50", "p95", "p99", "X*R", "Seconds", "Stopped because"];

    /// <summary>Writes the summary of <paramref name="report"/>, saved at <paramref name="path"/>.</summary>
    public static void Write(IAnsiConsole console, ProbeReport report, string path)
    {
        ArgumentNullException.ThrowIfNull(console);
        ArgumentNullException.ThrowIfNull(report);
        console.WriteLine();
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
            l.LittleConcurrency.ToString("0.0", CultureInfo.InvariantCulture),
            l.Seconds.ToString("0.0", CultureInfo.InvariantCulture),
            l.StopReason ?? (l.EndedBy == LevelEnd.Measured ? string.Empty : l.EndedBy),
        ]).ToArray();
        console.WriteLine(TextTable.Render(s_headers, rows, i => i is > 0 and < 10 && i != 3));
        console.WriteLine("X*R: ok and failed requests per second times their mean latency (Little's law), the concurrency the server really saw.");
        if (report.Usl is { } usl)
        {
            var peak = usl.PeakConcurrency is { } p ? $"throughput peaks at {p.ToString("0", CultureInfo.InvariantCulture)} at once" : "no peak (kappa 0: throughput levels off, it does not fall)";
            console.WriteLine($"USL fit: sigma {usl.Sigma.ToString("0.####", CultureInfo.InvariantCulture)}, kappa {usl.Kappa.ToString("0.######", CultureInfo.InvariantCulture)}, lambda {ProbeText.Rate(usl.Lambda)} ok/s, R2 {usl.R2.ToString("0.###", CultureInfo.InvariantCulture)}: {peak}.");
        }

        var recommendation = report.Recommendation;
        console.WriteLine();
        var rate = recommendation.RatePerSecond is { } r ? $" and {ProbeText.Rate(r)} requests/s" : string.Empty;
        console.WriteLine($"Recommendation: {recommendation.Limit.ToString(CultureInfo.InvariantCulture)} at once{rate}.");
        console.WriteLine($"Why: {recommendation.Reason}.");
        console.WriteLine();
        console.WriteLine("FanOut:");
        console.WriteLine(Indent(recommendation.Code.FanOut));
        console.WriteLine("Parallel.ForEachAsync:");
        console.WriteLine(Indent(recommendation.Code.ParallelForEachAsync));
        console.WriteLine("SemaphoreSlim:");
        console.WriteLine(Indent(recommendation.Code.SemaphoreSlim));
        console.WriteLine();
        console.WriteLine($"{report.RequestsSent.ToString("N0", CultureInfo.InvariantCulture)} requests in {report.Seconds.ToString("0.0", CultureInfo.InvariantCulture)} s ({report.EndedBy}). Wrote {path}");
    }

    /// <summary>A level's failures as "none" or "429 x120, timeout x3".</summary>
    public static string FailuresText(LevelResult level)
    {
        ArgumentNullException.ThrowIfNull(level);
        return level.Failures.Count == 0 ? "none" : string.Join(", ", level.Failures.Select(f => $"{f.Key} x{f.Value.ToString("N0", CultureInfo.InvariantCulture)}"));
    }

    private static string Indent(string code) => string.Join('\n', code.Split('\n').Select(line => "    " + line));
}
