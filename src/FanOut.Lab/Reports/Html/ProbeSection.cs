using System.Globalization;
using System.Text;

using FanOut.Lab.Probing;
using FanOut.Lab.Reports.Charts;

namespace FanOut.Lab.Reports.Html;

/// <summary>A probe (probe.json) as a section of report.html: the recommendation and how sure it is, the levels, the
/// throughput against concurrency with the USL fit and its peak band, latency against concurrency, and the open-loop check.</summary>
public sealed class ProbeSection(ProbeReport report) : IReportSection
{
    /// <inheritdoc/>
    public string Id => "probe";

    /// <inheritdoc/>
    public string Title => "Probe of " + report.Url;

    /// <inheritdoc/>
    public void Write(StringBuilder html)
    {
        ArgumentNullException.ThrowIfNull(html);
        var r = report.Recommendation;
        html.Append("<p class=\"verdict\" data-probe-status=\"").Append(Svg.Text(r.Status)).Append("\"><b>").Append(Svg.Text(ProbeText.Headline(r))).Append("</b> ")
            .Append(Svg.Text(Capitalized(r.Reason))).Append(".</p>");
        if (report.Capacity is { } capacity)
        {
            html.Append("<p>").Append(Svg.Text(ProbeText.CapacityLine(capacity))).Append("</p>");
        }

        var budget = report.MaxRequests is { } max ? $" of a budget of {max.ToString("N0", CultureInfo.InvariantCulture)}" : string.Empty;
        html.Append("<p class=\"note\">").Append(Svg.Text($"{report.RequestsSent.ToString("N0", CultureInfo.InvariantCulture)} requests{budget} in {report.Seconds.ToString("0.0", CultureInfo.InvariantCulture)} s ({report.EndedBy}), from {report.Machine.Processor} ({report.Machine.ProcessorCount} cores), {report.Machine.DotnetVersion}.")).Append("</p>");

        html.Append("<div class=\"charts\">").Append(ThroughputChart()).Append(LatencyChart()).Append("</div>");
        if (ProbeText.UslLines(report) is { Count: > 0 } usl)
        {
            html.Append("<p>").Append(Svg.Text(string.Join(' ', usl))).Append("</p>");
        }

        AppendLevels(html);
        AppendOpenLoop(html);
        if (r.Code is { } code)
        {
            html.Append("<h3>Code</h3><pre>").Append(Svg.Text(code.FanOut)).Append("</pre>");
        }
    }

    private string ThroughputChart()
    {
        var levels = report.Levels;
        if (levels.Count == 0)
        {
            return Svg.Empty("Ok/s against concurrency", "no level was measured");
        }

        var series = new List<Series>
        {
            new("measured ok/s", Palette.Series(0), levels.Select(l => (double)l.Concurrency).ToArray(), levels.Select(l => l.OkPerSecond).ToArray()),
        };
        var top = levels.Max(l => l.OkPerSecond);
        var right = levels.Max(l => l.Concurrency);
        if (report.Usl is { } usl)
        {
            var xs = Enumerable.Range(0, 61).Select(i => 1 + ((right - 1) * i / 60.0)).ToArray();
            series.Add(new("USL fit", Palette.Series(1), xs, xs.Select(usl.Throughput).ToArray(), Dashed: true));
        }

        if (report.UslBand is { PeakLow: { } low } band && low <= right && ProbeText.PeakBeyondCapacity(report) is null)
        {
            series.Add(new("peak band (95%)", Palette.Series(2), [low, low], [0, top], Dashed: true));
            if (band.PeakHigh is { } high && high <= right)
            {
                series.Add(new("peak band (95%) ", Palette.Series(2), [high, high], [0, top], Dashed: true));
            }
        }

        if (report.Recommendation.Limit is { } limit)
        {
            series.Add(new($"{(report.Recommendation.IsFinal ? "recommended" : report.Recommendation.Status)}: {limit}", Palette.Series(3), [limit, limit], [0, top]));
        }

        return LineChart.Render("Ok/s against concurrency", "concurrency", "ok/s", series, logX: false, logY: false);
    }

    private string LatencyChart()
    {
        var levels = report.Levels.Where(l => l.LatencyP50Ms is not null).ToArray();
        if (levels.Length == 0)
        {
            return Svg.Empty("Latency against concurrency", "no ok answer");
        }

        var xs = levels.Select(l => (double)l.Concurrency).ToArray();
        return LineChart.Render(
            "Latency against concurrency",
            "concurrency",
            "ms",
            [
                new("p50", Palette.Series(0), xs, levels.Select(l => l.LatencyP50Ms!.Value).ToArray()),
                new("p99", Palette.Series(1), xs, levels.Select(l => l.LatencyP99Ms!.Value).ToArray()),
            ],
            logX: false,
            logY: false);
    }

    private void AppendLevels(StringBuilder html)
    {
        html.Append("<h3>Levels</h3><div class=\"table-wrap\"><table class=\"probe-levels\"><thead><tr>");
        foreach (var header in new[] { "Concurrency", "Requests", "Ok", "Failures", "Ok/s", "p50", "p99", "X*R", "Seconds", "Note" })
        {
            html.Append("<th>").Append(header).Append("</th>");
        }

        html.Append("</tr></thead><tbody>");
        foreach (var l in report.Levels)
        {
            var failures = l.Failures.Count == 0 ? "none" : string.Join(", ", l.Failures.Select(f => $"{f.Key} x{f.Value.ToString("N0", CultureInfo.InvariantCulture)}"));
            var note = l.StopReason ?? (l.EndedBy == LevelEnd.Measured ? string.Empty : l.EndedBy);
            var within = report.Recommendation.Limit == l.Concurrency ? " class=\"agrees\"" : string.Empty;
            html.Append("<tr").Append(within).Append('>');
            Cell(html, l.Concurrency.ToString(CultureInfo.InvariantCulture), true);
            Cell(html, l.Requests.ToString("N0", CultureInfo.InvariantCulture), true);
            Cell(html, l.Ok.ToString("N0", CultureInfo.InvariantCulture), true);
            Cell(html, failures, false);
            Cell(html, ProbeText.Rate(l.OkPerSecond), true);
            Cell(html, ProbeText.Ms(l.LatencyP50Ms), true);
            Cell(html, ProbeText.Ms(l.LatencyP99Ms), true);
            Cell(html, l.OkLittleConcurrency.ToString("0.0", CultureInfo.InvariantCulture), true);
            Cell(html, l.Seconds.ToString("0.0", CultureInfo.InvariantCulture), true);
            Cell(html, note, false);
            html.Append("</tr>");
        }

        html.Append("</tbody></table></div><p class=\"note\">X*R: ok/s times the ok answers' mean latency (Little's law), the requests the server was serving at once.</p>");
    }

    private void AppendOpenLoop(StringBuilder html)
    {
        if (report.OpenLoop is not { } open)
        {
            html.Append("<p class=\"note\">No open-loop check: there was no final limit to check.</p>");
            return;
        }

        html.Append("<h3>Open-loop check</h3><p data-open-loop-holds=\"").Append(open.Holds ? "true" : "false").Append("\">")
            .Append(Svg.Text($"{ProbeText.Rate(open.ArrivalsPerSecond)} arrivals/s at a constant rate, at most {open.Limit.ToString(CultureInfo.InvariantCulture)} in flight, {open.Sent.ToString("N0", CultureInfo.InvariantCulture)} sent in {open.Seconds.ToString("0.0", CultureInfo.InvariantCulture)} s: {open.Verdict}."))
            .Append("</p><div class=\"table-wrap\"><table class=\"probe-open-loop\"><thead><tr><th>Latency</th><th>p50</th><th>p99</th></tr></thead><tbody>");
        Row(html, "open loop, from the intended start (coordinated omission corrected)", open.LatencyP50Ms, open.LatencyP99Ms);
        Row(html, "open loop, from the send", open.ServiceP50Ms, open.ServiceP99Ms);
        Row(html, "closed loop at the same limit", null, open.ClosedLoopP99Ms);
        html.Append("</tbody></table></div>");
    }

    private static void Row(StringBuilder html, string name, double? p50, double? p99)
    {
        html.Append("<tr>");
        Cell(html, name, false);
        Cell(html, p50 is null ? string.Empty : ProbeText.Ms(p50), true);
        Cell(html, ProbeText.Ms(p99), true);
        html.Append("</tr>");
    }

    private static void Cell(StringBuilder html, string text, bool number) =>
        html.Append(number ? "<td class=\"num\">" : "<td>").Append(Svg.Text(text)).Append("</td>");

    private static string Capitalized(string text) => text.Length == 0 ? text : char.ToUpperInvariant(text[0]) + text[1..];
}
