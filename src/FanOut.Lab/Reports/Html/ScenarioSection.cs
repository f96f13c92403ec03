using System.Globalization;
using System.Text;

using FanOut.Lab.Reports.Charts;
using FanOut.Lab.Results;

namespace FanOut.Lab.Reports.Html;

/// <summary>One scenario: the seed's claim and our verdict, mean time per strategy, grids, real-I/O outcomes, timelines, and the full table.</summary>
public sealed class ScenarioSection(ScenarioResult scenario) : IReportSection
{
    /// <inheritdoc/>
    public string Id => scenario.Id;

    /// <inheritdoc/>
    public string Title => scenario.Id;

    /// <inheritdoc/>
    public void Write(StringBuilder html)
    {
        ArgumentNullException.ThrowIfNull(html);
        html.Append("<p class=\"claim\"><b>Seed</b> <code>").Append(Svg.Text(scenario.Seed)).Append("</code> (").Append(Svg.Text(scenario.SeedMachine)).Append(") said: ")
            .Append(Svg.Text(scenario.SeedClaim)).Append("</p>");
        html.Append("<p class=\"verdict\"><b>Here:</b> ").Append(Svg.Text(scenario.Verdict ?? "(not all cases have finished)")).Append("</p>");
        var ran = scenario.Cases.Where(c => c.Succeeded).ToArray();
        if (ran.Length == 0)
        {
            html.Append("<p>No case of this scenario finished.</p>");
            HtmlTable.Append(html, ResultTable.For(scenario));
            return;
        }

        var labels = CaseLabels.For(scenario);
        var isIo = ran.Any(c => c.Io is not null);
        if (!isIo)
        {
            html.Append("<p class=\"note\">Time bars share one colour: shorter is faster. \"eff.\" is ideal / mean: 1.00 means as fast as that row's own concurrency allows, not faster than the other rows.</p>");
        }

        html.Append("<div class=\"charts\">");
        // One neutral colour for every bar: a colour scale (the 5 s default at efficiency 1.0 was bright green) or a palette
        // with a green and a red lets a slower row read as the better one. Efficiency (ideal / mean) is printed after the time.
        html.Append(BarChart.Render(
            "Mean time per strategy (shorter is faster; error bar: 99.9% CI)",
            "mean ms",
            ran.Select(c => new Bar(labels[c], c.MeanMs, Palette.Time, c.ErrorMs, SeedFigure.Milliseconds(c.SeedSays), CellTextFor(c, isIo))).ToArray(),
            "the seed's published figure"));
        foreach (var grid in GridCharts.For(ran))
        {
            html.Append(grid);
        }

        if (isIo)
        {
            var io = ran.Where(c => c.Io is not null).ToArray();
            html.Append(BarChart.Render("Successful items per second", "ok/s", io.Select(c => new Bar(labels[c], c.Io!.SuccessesPerSecond, Palette.Series(labels.Family(c)), Text: c.Io.SuccessesPerSecond.ToString("N0", CultureInfo.InvariantCulture))).ToArray(), log: false));
            html.Append(BarChart.Render("Rejections per run (server 429s; a protected service's 503s)", "rejections", io.Select(c => new Bar(labels[c], c.Io!.Rejected429 ?? c.Io.FailuresHttp, "#d62728", Text: Results.Columns.CellText.Count(c.Io.Rejected429 ?? c.Io.FailuresHttp))).ToArray(), log: false));
            html.Append(BarChart.Render("Client calls in flight (bar) beside the server's peak served at once (mark)", "peak concurrency", io.Select(c => new Bar(labels[c], c.PeakInFlight, Palette.Series(labels.Family(c)), Reference: c.Io!.PeakConcurrentServed, Text: $"{Results.Columns.CellText.Count(c.PeakInFlight)} / {(c.Io.PeakConcurrentServed is { } p ? Results.Columns.CellText.Count(p) : "-")}")).ToArray(), "server peak"));
        }

        html.Append("</div>");
        LoadStepTable.Append(html, ran);
        TimelineCharts.Append(html, ran, labels);
        html.Append("<h3>All columns</h3>");
        HtmlTable.Append(html, ResultTable.For(scenario));
        foreach (var c in scenario.Cases.Where(c => c.Note is not null))
        {
            html.Append("<p class=\"note\">").Append(Svg.Text($"{labels[c]}: {c.Note}")).Append("</p>");
        }
    }

    private static string CellTextFor(CaseResult c, bool isIo) =>
        Results.Columns.CellText.Time(c.MeanMs) + (c.ErrorMs is { } e ? " ± " + Results.Columns.CellText.Time(e) : string.Empty)
        + (isIo ? string.Empty : ", eff. " + Results.Columns.CellText.Ratio(c.Efficiency));
}
