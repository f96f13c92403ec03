using FanOut.Lab.Probing;
using FanOut.Lab.Reports.Html;
using FanOut.Lab.Results;

namespace FanOut.Lab.Tests.Reports;

/// <summary>probe.json as a section of report.html.</summary>
public sealed class ProbeSectionTests
{
    /// <summary>A probe of a capacity of 12 as the engine writes it (levels, fit, band, capacity, open-loop check).</summary>
    internal static ProbeReport Report(string status = RecommendationStatus.Final)
    {
        static LevelResult Level(int n, double okPerSecond, long rejected, double p50, double p99, string? note) => new()
        {
            Concurrency = n,
            Requests = 300 + rejected,
            Ok = 300,
            Failures = rejected > 0 ? new Dictionary<string, long> { ["429"] = rejected } : new Dictionary<string, long>(),
            OkPerSecond = okPerSecond,
            LatencyP50Ms = p50,
            LatencyP95Ms = p99 * 0.95,
            LatencyP99Ms = p99,
            LatencyMeanMs = p50,
            LatencyStdDevMs = 1,
            OkLittleConcurrency = okPerSecond * p50 / 1000,
            LittleConcurrency = n,
            Seconds = 1,
            EndedBy = LevelEnd.Measured,
            StopReason = note,
        };
        LevelResult[] levels =
        [
            Level(1, 24, 0, 41, 44, null), Level(2, 48, 0, 41, 45, null), Level(4, 97, 0, 41, 45, null), Level(8, 194, 0, 41, 45, null),
            Level(12, 290, 0, 41, 45, null), Level(13, 291, 25, 41, 45, "beyond capacity: 7.7% rejected (429/503)"), Level(16, 290, 100, 41, 46, "overloaded: 25% rejected (429/503)"),
        ];
        var points = levels.Select(l => ((double)l.Concurrency, l.OkPerSecond)).ToArray();
        var usl = UslFit.Fit(points)!;
        var recommendation = Recommender.AtCapacity(levels[4], levels[5], "was beyond it: 7.7% rejected (429/503)", 12.0);
        if (status == RecommendationStatus.AtLeast)
        {
            recommendation = Recommender.AtLeast(levels[4], "--max-requests 2,000 was spent");
        }

        var open = new OpenLoopResult(261, 12, 261, 261, 261, new Dictionary<string, long>(), 43, 47, 42, 45, 45, 0.4, 0.5, 1, 1.0, 3, true, "held: 261 arrivals at 261/s, none rejected, 1 waiting at the end");
        return new ProbeReport(
            "http://127.0.0.1:5391/item/1",
            new MachineInfo("Linux", 2, ".NET 10", "CPU"),
            levels,
            usl,
            UslBand.Bootstrap(points, usl),
            new CapacityFinding(CapacityFinding.Rejections, 41, 12, 13, 12.0, [12, 13], true),
            status == RecommendationStatus.Final ? open : null,
            recommendation,
            20_000,
            2_229,
            13.1,
            LevelEnd.Measured);
    }

    [Fact]
    public void Write_FinalProbe_ShowsTheRecommendationLevelsChartsBandAndOpenLoop()
    {
        var html = HtmlReport.Page("t", [new ProbeSection(Report())]);
        Assert.Contains("<section id=\"probe\"><h2>Probe of http://127.0.0.1:5391/item/1</h2>", html, StringComparison.Ordinal);
        Assert.Contains("data-probe-status=\"final\"><b>Recommendation: 12 at once.</b> The capacity is 12 at once", html, StringComparison.Ordinal);
        Assert.Contains("Capacity: 12 (it rejects beyond its capacity; 12 within, 13 beyond; searched 12, 13;", html, StringComparison.Ordinal);
        Assert.Contains("2,229 requests of a budget of 20,000 in 13.1 s (measured)", html, StringComparison.Ordinal);
        Assert.Equal(2, html.Split("<svg class=\"chart\"").Length - 1);
        Assert.Contains("Ok/s against concurrency", html, StringComparison.Ordinal);
        Assert.Contains("USL fit: sigma", html, StringComparison.Ordinal);
        Assert.Contains("bootstrap resamples over the levels", html, StringComparison.Ordinal);
        Assert.Contains("<tr class=\"agrees\"><td class=\"num\">12</td>", html, StringComparison.Ordinal);
        Assert.Contains("beyond capacity: 7.7% rejected (429/503)", html, StringComparison.Ordinal);
        Assert.Contains("data-open-loop-holds=\"true\"", html, StringComparison.Ordinal);
        Assert.Contains("<td>open loop, from the intended start (coordinated omission corrected)</td><td class=\"num\">43 ms</td><td class=\"num\">47 ms</td>", html, StringComparison.Ordinal);
        Assert.Contains("<td>closed loop at the same limit</td><td class=\"num\"></td><td class=\"num\">45 ms</td>", html, StringComparison.Ordinal);
        Assert.Contains("ConcurrencyLimit.Fixed(12)", html, StringComparison.Ordinal);
        Assert.DoesNotContain("https://", html, StringComparison.Ordinal);
    }

    [Fact]
    public void Write_AtLeastProbe_HasNoCodeAndNoOpenLoopCheck()
    {
        var html = HtmlReport.Page("t", [new ProbeSection(Report(RecommendationStatus.AtLeast))]);
        Assert.Contains("data-probe-status=\"at-least\"><b>At least 12 at once (not final: the endpoint was not saturated).</b>", html, StringComparison.Ordinal);
        Assert.DoesNotContain("ConcurrencyLimit.Fixed", html, StringComparison.Ordinal);
        Assert.Contains("No open-loop check", html, StringComparison.Ordinal);
    }

    [Fact]
    public void ProbeReportFile_WrittenThenRead_GivesTheSameSection()
    {
        var folder = Directory.CreateTempSubdirectory("fanout-probe-section-");
        try
        {
            var report = Report();
            ProbeReportFile.Write(folder.FullName, report);
            var read = ProbeReportFile.Read(folder.FullName, out var error);
            Assert.Null(error);
            Assert.Equal(HtmlReport.Page("t", [new ProbeSection(report)]), HtmlReport.Page("t", [new ProbeSection(read!)]));
        }
        finally
        {
            folder.Delete(recursive: true);
        }
    }

    [Fact]
    public void ProbeReportFile_NotAProbe_SaysSo()
    {
        var file = Path.Combine(Path.GetTempPath(), $"fanout-{Guid.NewGuid():N}-probe.json");
        try
        {
            File.WriteAllText(file, "{ \"x\": 1 }");
            Assert.Null(ProbeReportFile.Read(file, out var error));
            Assert.Contains("is not a FanOut probe.json", error, StringComparison.Ordinal);
            Assert.Null(ProbeReportFile.Read("/no/such/folder", out error));
            Assert.Null(error);
        }
        finally
        {
            File.Delete(file);
        }
    }
}
