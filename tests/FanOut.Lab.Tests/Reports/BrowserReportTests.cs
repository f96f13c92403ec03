using System.Text.RegularExpressions;

using FanOut.Lab.Reports.Html;
using FanOut.Lab.Scenarios;
using FanOut.Lab.Tests.Results;

using Xunit.Abstractions;

namespace FanOut.Lab.Tests.Reports;

/// <summary>report.html as a person sees it: opened in headless Chromium with no network, no console error, every chart drawn with data, a screenshot saved.</summary>
public sealed partial class BrowserReportTests(ITestOutputHelper output)
{
    [ChromiumFact]
    public async Task Open_ReportOfARun_EveryChartHasDataAndNoConsoleError()
    {
        var folder = Directory.CreateTempSubdirectory("fanout-report-");
        try
        {
            var page = Path.Combine(folder.FullName, "report.html");
            // The adaptive case's timeline carries limit decisions, so their marks and legend are on the screenshot too.
            var html = HtmlReport.Write(HtmlReportTests.FixtureWithDecisions(), ScenarioCatalog.Default.Scenarios.Select(s => s.Id).ToArray());
            await File.WriteAllTextAsync(page, html);
            var charts = ChartTag().Count(html);
            Assert.True(charts >= 10, $"expected the fixture's charts, found {charts}");

            var (dom, log, exit) = await HeadlessChromium.RunAsync(page, "--dump-dom");

            Assert.Equal(0, exit);
            var consoleLines = log.Split('\n').Where(l => l.Contains("CONSOLE", StringComparison.Ordinal) || l.Contains("Uncaught", StringComparison.Ordinal)).ToArray();
            Assert.True(consoleLines.Length == 0, "console errors:\n" + string.Join('\n', consoleLines));
            var check = ChartCheck().Match(dom);
            Assert.True(check.Success, "the page's chart check did not run (script error?)");
            Assert.Equal($"ok {charts}", check.Groups["result"].Value);

            // What a reader sees (issue 26): no internal check counter, and the advice for waits is FanOut's default, not all at once.
            var text = VisibleText(dom);
            Assert.DoesNotContain("Chart check", text, StringComparison.Ordinal);
            Assert.Contains("Written by fanout; self-contained (no network).", text, StringComparison.Ordinal);
            Assert.Contains("Waits (async I/O, no known downstream limit) FanOut (adaptive) none to choose: FanOut's default starts at 10", text, StringComparison.Ordinal);
            Assert.DoesNotContain("prefer Task.WhenAll", text, StringComparison.Ordinal);
            Assert.Contains("Limit decisions by reason: SlowStartGrowth 15, ▲Growth 1, ▲Overload 1, ▲QueueSeen 1.", text, StringComparison.Ordinal);
            Assert.Equal(3, DecisionMark().Count(dom));

            var screenshot = Path.Combine(AppContext.BaseDirectory, "report-screenshot.png");
            File.Delete(screenshot);
            (_, _, exit) = await HeadlessChromium.RunAsync(page, $"--screenshot={screenshot}", "--window-size=1280,2400", "--hide-scrollbars");
            Assert.Equal(0, exit);
            Assert.True(new FileInfo(screenshot).Length > 10_000, "the screenshot is empty");
            output.WriteLine($"screenshot: {screenshot}");
        }
        finally
        {
            folder.Delete(recursive: true);
        }
    }

    [ChromiumFact]
    public async Task Open_ReportWithAProbe_ProbeChartsHaveDataAndNoConsoleError()
    {
        var folder = Directory.CreateTempSubdirectory("fanout-report-probe-");
        try
        {
            var page = Path.Combine(folder.FullName, "report.html");
            var html = HtmlReport.Write(GoldenFileTests.Fixture(), ScenarioCatalog.Default.Scenarios.Select(s => s.Id).ToArray(), [new ProbeSection(ProbeSectionTests.Report())]);
            await File.WriteAllTextAsync(page, html);
            var charts = ChartTag().Count(html);

            var (dom, log, exit) = await HeadlessChromium.RunAsync(page, "--dump-dom");

            Assert.Equal(0, exit);
            var consoleLines = log.Split('\n').Where(l => l.Contains("CONSOLE", StringComparison.Ordinal) || l.Contains("Uncaught", StringComparison.Ordinal)).ToArray();
            Assert.True(consoleLines.Length == 0, "console errors:\n" + string.Join('\n', consoleLines));
            Assert.Contains("<section id=\"probe\">", dom, StringComparison.Ordinal);
            Assert.Contains("<a href=\"#probe\">Probe of http://127.0.0.1:5391/item/1</a>", dom, StringComparison.Ordinal);
            var check = ChartCheck().Match(dom);
            Assert.True(check.Success, "the page's chart check did not run (script error?)");
            Assert.Equal($"ok {charts}", check.Groups["result"].Value);

            var screenshot = Path.Combine(AppContext.BaseDirectory, "report-probe-screenshot.png");
            File.Delete(screenshot);
            // The page `fanout report` writes for a probe folder alone, as a person sees it.
            var alone = Path.Combine(folder.FullName, "probe-report.html");
            await File.WriteAllTextAsync(alone, HtmlReport.Page("FanOut probe report", [new ProbeSection(ProbeSectionTests.Report())]));
            (_, _, exit) = await HeadlessChromium.RunAsync(alone, $"--screenshot={screenshot}", "--window-size=1280,1600", "--hide-scrollbars");
            Assert.Equal(0, exit);
            Assert.True(new FileInfo(screenshot).Length > 10_000, "the screenshot is empty");
            output.WriteLine($"screenshot: {screenshot}");
        }
        finally
        {
            folder.Delete(recursive: true);
        }
    }

    /// <summary>The DOM's text without tags, styles and scripts (an inline tag joins its neighbours, a block one is a space), entities decoded, runs of white space as one space.</summary>
    private static string VisibleText(string dom)
    {
        var text = Tag().Replace(Hidden().Replace(dom, " "), m => m.Groups["inline"].Success ? string.Empty : " ");
        return Space().Replace(System.Net.WebUtility.HtmlDecode(text), " ");
    }

    [GeneratedRegex("<(script|style|svg)[^>]*>.*?</\\1>", RegexOptions.Singleline)]
    private static partial Regex Hidden();

    [GeneratedRegex("<(?:/?(?<inline>code|b|a|span)\\b)?[^>]*>")]
    private static partial Regex Tag();

    [GeneratedRegex("\\s+")]
    private static partial Regex Space();

    [GeneratedRegex("<svg class=\"chart\"")]
    private static partial Regex ChartTag();

    [GeneratedRegex("<path class=\"decision\"")]
    private static partial Regex DecisionMark();

    [GeneratedRegex("data-chart-check=\"(?<result>[^\"]*)\"")]
    private static partial Regex ChartCheck();
}
