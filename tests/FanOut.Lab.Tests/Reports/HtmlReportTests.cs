using FanOut.Lab.Reports.Html;
using FanOut.Lab.Results;
using FanOut.Lab.Tests.Results;

namespace FanOut.Lab.Tests.Reports;

public sealed class HtmlReportTests
{
    private static readonly string[] s_all = ["seed000-fanout500", "seed001-io", "downstream-capacity", "hash-files"];

    [Fact]
    public void Write_PartialRun_HasEverySectionChartsAndNoNetwork()
    {
        var html = HtmlReport.Write(GoldenFileTests.Fixture(), s_all);

        foreach (var id in new[] { "machine", "recommendations", "seed000-fanout500", "seed001-io", "downstream-capacity" })
        {
            Assert.Contains($"<section id=\"{id}\">", html, StringComparison.Ordinal);
        }

        Assert.Contains("run all    # interrupted after downstream-capacity", html, StringComparison.Ordinal);
        Assert.Contains("Mean time against N (items)", html, StringComparison.Ordinal);
        Assert.Contains("In flight and the adaptive limit", html, StringComparison.Ordinal);
        Assert.Contains("FAILED: the child process exited with code 134", html, StringComparison.Ordinal);
        Assert.DoesNotContain("http://", html.Replace("http://www.w3.org/2000/svg", string.Empty, StringComparison.Ordinal), StringComparison.Ordinal);
        Assert.DoesNotContain("https://", html, StringComparison.Ordinal);
        Assert.DoesNotContain("data-marks=\"0\"", html, StringComparison.Ordinal);
    }

    [Fact]
    public void Write_Recommendations_WaitsAdviseFanOutsDefaultNeverAllAtOnce()
    {
        // Issue 26: the page said "Use Task.WhenAll: none needed, all 500 at once; prefer Task.WhenAll for I/O", which FO0003 flags.
        var section = Section(HtmlReport.Write(GoldenFileTests.Fixture(), s_all), "recommendations");
        var waits = section[section.IndexOf("<tr><td><a href=\"#seed000-fanout500\">", StringComparison.Ordinal)..];
        waits = waits[..waits.IndexOf("</tr>", StringComparison.Ordinal)];

        Assert.Contains("<td><b>FanOut (adaptive)</b></td>", waits, StringComparison.Ordinal);
        Assert.Contains("none to choose: FanOut&#39;s default starts at 10", waits, StringComparison.Ordinal);
        Assert.Contains("<td class=\"measured\">Measured, not advised", waits, StringComparison.Ordinal);
        Assert.DoesNotContain("<b>Task.WhenAll</b>", section, StringComparison.Ordinal);
        Assert.DoesNotContain("prefer Task.WhenAll", section, StringComparison.Ordinal);
        Assert.DoesNotContain("all 500 at once", section, StringComparison.Ordinal);
        Assert.DoesNotContain("at once", waits, StringComparison.Ordinal);
    }

    [Fact]
    public void Write_Footer_HasNoInternalCheckCounter()
    {
        var html = HtmlReport.Write(GoldenFileTests.Fixture(), s_all);
        var footer = html[html.IndexOf("<footer>", StringComparison.Ordinal)..html.IndexOf("</footer>", StringComparison.Ordinal)];

        Assert.DoesNotContain("Chart check", html, StringComparison.Ordinal);
        Assert.Equal("<footer>Written by <code>fanout</code>; self-contained (no network). <span id=\"chart-check\"></span>", footer);
    }

    [Fact]
    public void Write_SingleScenarioWithoutFinishedCases_SaysSoAndGivesItsCommand()
    {
        var fixture = GoldenFileTests.Fixture();
        var scenario = fixture.Scenarios[0] with { Cases = [fixture.Scenarios[0].Cases.Single(c => !c.Succeeded)], Verdict = null };
        var html = HtmlReport.Write(fixture with { Scenarios = [scenario] }, s_all);

        Assert.Contains("No case of this scenario finished.", html, StringComparison.Ordinal);
        Assert.Contains("-- run seed000-fanout500</pre>", html, StringComparison.Ordinal);
        Assert.Contains("No scenario of the decision matrix finished", html, StringComparison.Ordinal);
    }

    [Fact]
    public void Write_TimeChart_OneNeutralColourAndEfficiencyAsText()
    {
        // Issue 18 item 12: bars coloured by efficiency made the 5 s default bright green beside FanOut's olive 68 ms.
        var html = HtmlReport.Write(GoldenFileTests.Fixture(), s_all);
        var timeChart = html[html.IndexOf("Mean time per strategy", StringComparison.Ordinal)..];
        timeChart = timeChart[..timeChart.IndexOf("</svg>", StringComparison.Ordinal)];

        Assert.DoesNotContain("hsl(", html, StringComparison.Ordinal);
        var fills = System.Text.RegularExpressions.Regex.Matches(timeChart, "class=\"mark\"[^>]*fill=\"([^\"]+)\"").Select(m => m.Groups[1].Value).Distinct().ToArray();
        Assert.Equal([Lab.Reports.Charts.Palette.Time], fills);
        Assert.Contains(System.Net.WebUtility.HtmlEncode("5,055.08 ms ± 29.76 ms, eff. 0.99"), timeChart, StringComparison.Ordinal);
    }

    [Fact]
    public void Write_TimelineWhoseSamplerFellBehind_SaysSoPlainly()
    {
        var fixture = GoldenFileTests.Fixture();
        var scenario = fixture.Scenarios[0];
        var adaptive = scenario.Cases.Single(c => c.Strategy == "FanOut (adaptive)");
        var late = adaptive with { Timeline = adaptive.Timeline! with { RunMs = 20, FirstSampleMs = 17.7, LargestGapMs = 1 } };
        var html = HtmlReport.Write(fixture with { Scenarios = [scenario with { Cases = [.. scenario.Cases.Select(c => ReferenceEquals(c, adaptive) ? late : c)] }] }, s_all);

        Assert.Contains("The sampler fell behind: first sample 17.7 ms after the start.", html, StringComparison.Ordinal);
        Assert.Contains("Not every timeline kept that promise", html, StringComparison.Ordinal);
        Assert.DoesNotContain("Not every timeline kept that promise", HtmlReport.Write(fixture, s_all), StringComparison.Ordinal);
    }

    [Fact]
    public void Write_TimelineWithDecisions_MarksEachButSlowStartOnTheLimitAndCountsThemByReason()
    {
        var html = HtmlReport.Write(FixtureWithDecisions(), s_all);

        var limitChart = Chart(html, "In flight and the adaptive limit");
        Assert.Equal(3, limitChart.Split("<path class=\"decision\"").Length - 1); // Overload, QueueSeen, Growth; not the slow-start step
        Assert.Contains("data-kind=\"Overload\"", limitChart, StringComparison.Ordinal);
        Assert.DoesNotContain("data-kind=\"SlowStartGrowth\"", limitChart, StringComparison.Ordinal);
        Assert.Contains("<title>4.2 ms: 16 -&gt; 8, Overload (window median 12.5 ms, baseline 10 ms)</title>", limitChart, StringComparison.Ordinal);
        var slowStart = FixtureWithDecisions().Scenarios[0].Cases.Single(c => c.Timeline is not null).Timeline!.Decisions![0];
        Assert.Equal("1.5 ms: 1 -> 16, SlowStartGrowth (15 steps) (window median not read, baseline 10 ms)", TimelineCharts.DecisionText(slowStart));
        Assert.Contains(
            "Limit decisions by reason: SlowStartGrowth 15, <span class=\"reason\" style=\"color:#2ca02c\">&#9650;</span>Growth 1, " +
            "<span class=\"reason\" style=\"color:#d62728\">&#9650;</span>Overload 1, <span class=\"reason\" style=\"color:#e377c2\">&#9650;</span>QueueSeen 1.",
            html,
            StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(0, 0, 0, "Limit decisions by reason: none, the limit held where it started.</p>")]
    [InlineData(2, 7, 1, "Limit decisions by reason: SlowStartGrowth 15, <span class=\"reason\" style=\"color:#d62728\">&#9650;</span>Overload 1, 7 more not kept. Each is a triangle")]
    public void Write_DecisionsNoneOrSomeDropped_TheLineUnderTheCardSaysSo(int kept, int dropped, int marks, string expected)
    {
        var fixture = FixtureWithDecisions();
        var scenario = fixture.Scenarios[0];
        var adaptive = scenario.Cases.Single(c => c.Timeline is not null);
        var changed = adaptive with { Timeline = adaptive.Timeline! with { Decisions = [.. adaptive.Timeline.Decisions!.Take(kept)], DecisionsDropped = dropped } };

        var html = HtmlReport.Write(fixture with { Scenarios = [scenario with { Cases = [.. scenario.Cases.Select(c => ReferenceEquals(c, adaptive) ? changed : c)] }] }, s_all);

        Assert.Contains(expected, html, StringComparison.Ordinal);
        Assert.Equal(marks, Chart(html, "In flight and the adaptive limit").Split("<path class=\"decision\"").Length - 1);
    }

    [Fact]
    public void Write_OldTimelineWithoutDecisions_DrawsTheLimitWithoutMarksOrLegend()
    {
        // The golden results.json was written before the lab recorded decisions: it loads, and its limit chart still draws.
        var fixture = GoldenFileTests.Fixture();
        Assert.All(fixture.Scenarios.SelectMany(s => s.Cases), c => Assert.Null(c.Timeline?.Decisions));

        var html = HtmlReport.Write(fixture, s_all);

        Assert.Contains("In flight and the adaptive limit", html, StringComparison.Ordinal);
        Assert.DoesNotContain("class=\"decision\"", html, StringComparison.Ordinal);
        Assert.DoesNotContain("Limit decisions", html, StringComparison.Ordinal);
    }

    /// <summary>The golden fixture with decisions on its adaptive case's timeline (limit 1, 4, 16, 16 over 6 ms).</summary>
    internal static LabResults FixtureWithDecisions()
    {
        var fixture = GoldenFileTests.Fixture();
        var scenario = fixture.Scenarios[0];
        var adaptive = scenario.Cases.Single(c => c.Strategy == "FanOut (adaptive)");
        LimitDecision[] decisions =
        [
            new() { TimeMs = 1.5, From = 1, To = 16, Reason = nameof(LimitChangeReason.SlowStartGrowth), BaselineMs = 10, InFlight = 4, Steps = 15 },
            new() { TimeMs = 4.2, From = 16, To = 8, Reason = nameof(LimitChangeReason.Overload), WindowMedianMs = 12.5, BaselineMs = 10, InFlight = 16 },
            new() { TimeMs = 5, From = 8, To = 6, Reason = nameof(LimitChangeReason.QueueSeen), WindowMedianMs = 14, BaselineMs = 10, InFlight = 8 },
            new() { TimeMs = 5.8, From = 6, To = 7, Reason = nameof(LimitChangeReason.Growth), WindowMedianMs = 10.2, BaselineMs = 10, InFlight = 6 },
        ];
        var marked = adaptive with { Timeline = adaptive.Timeline! with { Decisions = decisions, DecisionsDropped = 0 } };
        return fixture with { Scenarios = [scenario with { Cases = [.. scenario.Cases.Select(c => ReferenceEquals(c, adaptive) ? marked : c)] }, .. fixture.Scenarios.Skip(1)] };
    }

    /// <summary>The <c>svg.chart</c> titled <paramref name="title"/>.</summary>
    private static string Chart(string html, string title)
    {
        var at = html.IndexOf($"<title>{title}</title>", StringComparison.Ordinal);
        Assert.True(at >= 0, $"no chart titled {title}");
        var start = html.LastIndexOf("<svg class=\"chart\"", at, StringComparison.Ordinal);
        return html[start..(html.IndexOf("</svg>", at, StringComparison.Ordinal) + "</svg>".Length)];
    }

    [Fact]
    public void Milliseconds_SeedFigures_ReadsTheTime()
    {
        Assert.Equal(640, SeedFigure.Milliseconds("~640 ms, 16 in flight (ProcessorCount)"));
        Assert.Equal(1008, SeedFigure.Milliseconds("1.008 s, 400 B (one call, not five)"));
        Assert.Equal(2.183321, SeedFigure.Milliseconds("2,183.321 us")!.Value, 6);
        Assert.Null(SeedFigure.Milliseconds("\"starves the pool\"; no number"));
    }

    [Fact]
    public void Write_Section_IsOneMoreEntryOnThePage()
    {
        var html = HtmlReport.Page("t", [new MachineSection(GoldenFileTests.Fixture(), s_all), new ExtraSection()]);

        Assert.Contains("<a href=\"#extra\">Extra</a>", html, StringComparison.Ordinal);
        Assert.Contains("<section id=\"extra\"><h2>Extra</h2><p>probe</p></section>", html, StringComparison.Ordinal);
    }

    private static string Section(string html, string id)
    {
        var start = html.IndexOf($"<section id=\"{id}\">", StringComparison.Ordinal);
        return html[start..html.IndexOf("</section>", start, StringComparison.Ordinal)];
    }

    private sealed class ExtraSection : IReportSection
    {
        public string Id => "extra";

        public string Title => "Extra";

        public void Write(System.Text.StringBuilder html) => html.Append("<p>probe</p>");
    }
}
