using FanOut.Cli.Output;
using FanOut.Lab.Probing;
using FanOut.Lab.Results;

using Spectre.Console;

namespace FanOut.Cli.Tests.Output;

/// <summary>The probe's closing summary as a person reads it on the console.</summary>
public sealed class ProbeSummaryTests
{
    [Fact]
    public void Write_UslPeakPastTheMeasuredCapacity_SaysToUseTheCapacityAndPrintsNoPeakFigure()
    {
        // Issue 26: "USL fit: throughput peaks at 23 at once" beside "Capacity: 6", with no word on which to believe.
        var text = Summary(Report(uslPeak: 23));

        Assert.Contains("Capacity: 6 (it rejects beyond its capacity; 6 within, 7 beyond;", text, StringComparison.Ordinal);
        Assert.Contains("Its curve peaks at 23 at once, past the capacity measured above (6)", text, StringComparison.Ordinal);
        Assert.Contains("so use the capacity, not the curve's peak.", text, StringComparison.Ordinal);
        Assert.DoesNotContain("throughput peaks at 23", text, StringComparison.Ordinal);
        Assert.Contains("Recommendation: 6 at once.", text, StringComparison.Ordinal);
    }

    [Fact]
    public void Write_UslPeakAtTheCapacity_PrintsThePeak()
    {
        var text = Summary(Report(uslPeak: 7));

        Assert.Contains("throughput peaks at 7 at once.", text, StringComparison.Ordinal);
        Assert.DoesNotContain("use the capacity", text, StringComparison.Ordinal);
    }

    private static string Summary(ProbeReport report)
    {
        var writer = new StringWriter();
        var console = AnsiConsole.Create(new AnsiConsoleSettings { Ansi = AnsiSupport.No, ColorSystem = ColorSystemSupport.NoColors, Out = new AnsiConsoleOutput(writer) });
        console.Profile.Width = 1000; // one sentence a line, as on a wide terminal
        ProbeSummary.Write(console, report, "probe.json");
        return writer.ToString();
    }

    private static ProbeReport Report(double uslPeak)
    {
        static LevelResult Level(int n, long rejected, string? note) => new()
        {
            Concurrency = n,
            Requests = 300 + rejected,
            Ok = 300,
            Failures = rejected > 0 ? new Dictionary<string, long> { ["429"] = rejected } : new Dictionary<string, long>(),
            OkPerSecond = 20 * Math.Min(n, 6),
            LatencyP50Ms = 50,
            LatencyP95Ms = 55,
            LatencyP99Ms = 60,
            LatencyMeanMs = 50,
            LatencyStdDevMs = 1,
            OkLittleConcurrency = Math.Min(n, 6),
            LittleConcurrency = n,
            Seconds = 1,
            EndedBy = LevelEnd.Measured,
            StopReason = note,
        };
        LevelResult[] levels = [Level(1, 0, null), Level(2, 0, null), Level(4, 0, null), Level(6, 0, null), Level(7, 40, "beyond capacity: 12% rejected (429/503)"), Level(8, 90, "overloaded: 23% rejected (429/503)")];
        return new ProbeReport(
            "http://127.0.0.1:5391/item/1",
            new MachineInfo("Linux", 2, ".NET 10", "CPU"),
            levels,
            new UslModel(0.01, 0.0015, 21, uslPeak, 0.97),
            null,
            new CapacityFinding(CapacityFinding.Rejections, 50, 6, 7, 6.0, [6, 7], true),
            null,
            Recommender.AtCapacity(levels[3], levels[4], "was beyond it: 12% rejected (429/503)", 6.0),
            20_000,
            2_100,
            9.5,
            LevelEnd.Measured);
    }
}
