using FanOut.Cli.Output;
using FanOut.Lab.Probing;

using Spectre.Console;

namespace FanOut.Cli.Tests.Output;

/// <summary>The probe's closing summary as a person reads it on the console.</summary>
public sealed class ProbeSummaryTests
{
    [Fact]
    public void Write_UslPeakPastTheMeasuredCapacity_SaysToUseTheCapacityAndPrintsNoPeakFigure()
    {
        // Issue 26: "USL fit: throughput peaks at 23 at once" beside "Capacity: 6", with no word on which to believe.
        var text = Summary(SampleProbeReports.Capacity6(uslPeak: 23));

        Assert.Contains("Capacity: 6 (it rejects beyond its capacity; 6 within, 7 beyond;", text, StringComparison.Ordinal);
        Assert.Contains("Its curve peaks at 23 at once, past the capacity measured above (6)", text, StringComparison.Ordinal);
        Assert.Contains("so use the capacity, not the curve's peak.", text, StringComparison.Ordinal);
        Assert.DoesNotContain("throughput peaks at 23", text, StringComparison.Ordinal);
        Assert.Contains("Recommendation: 6 at once.", text, StringComparison.Ordinal);
    }

    [Fact]
    public void Write_UslPeakAtTheCapacity_PrintsThePeak()
    {
        var text = Summary(SampleProbeReports.Capacity6(uslPeak: 7));

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
}
