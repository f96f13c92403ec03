using FanOut.Lab.Probing;
using FanOut.Lab.Tests.Reports;

namespace FanOut.Lab.Tests.Probing;

public sealed class ProbeTextTests
{
    [Fact]
    public void UslLines_PeakBeyondTheMeasuredCapacity_SaysToUseTheCapacityAndGivesNoPeakFigure()
    {
        // Issue 26: "USL fit: throughput peaks at 23 at once" printed beside "Capacity: 6", with no word on which to believe.
        var report = ProbeSectionTests.Report() with
        {
            Usl = new UslModel(0.01, 0.0015, 25, 23, 0.97),
            Capacity = new CapacityFinding(CapacityFinding.Rejections, 41, 6, 7, 6.2, [6, 7], true),
        };

        var lines = ProbeText.UslLines(report);

        Assert.Equal(2, lines.Count);
        Assert.StartsWith("USL fit: sigma 0.01, kappa 0.0015, lambda 25 ok/s, R2 0.97. Its curve peaks at 23 at once, past the capacity measured above (6)", lines[0], StringComparison.Ordinal);
        Assert.EndsWith("where the server began to reject, so use the capacity, not the curve's peak.", lines[0], StringComparison.Ordinal);
        Assert.StartsWith("USL band (", lines[1], StringComparison.Ordinal);
        Assert.DoesNotContain("modelled to peak", lines[1], StringComparison.Ordinal);
        Assert.Equal(6, ProbeText.PeakBeyondCapacity(report));
    }

    [Fact]
    public void UslLines_PeakWithinTheMeasuredEdge_GivesThePeakAndTheBand()
    {
        var report = ProbeSectionTests.Report() with { Usl = new UslModel(0.01, 0.0015, 25, 13, 0.97) };

        var lines = ProbeText.UslLines(report);

        Assert.Equal("USL fit: sigma 0.01, kappa 0.0015, lambda 25 ok/s, R2 0.97: throughput peaks at 13 at once.", lines[0]);
        Assert.Equal($"USL band ({report.UslBand!.Resamples} bootstrap resamples over the levels): {report.UslBand.Plain}", lines[1]);
        Assert.Null(ProbeText.PeakBeyondCapacity(report));
    }

    [Fact]
    public void UslLines_NoFit_NoLine() =>
        Assert.Empty(ProbeText.UslLines(ProbeSectionTests.Report() with { Usl = null, UslBand = null }));
}
