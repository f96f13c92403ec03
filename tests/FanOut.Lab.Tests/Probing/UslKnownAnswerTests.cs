using FanOut.Lab.Probing;

using Xunit.Abstractions;

namespace FanOut.Lab.Tests.Probing;

/// <summary>Known answers for the USL fitter: published data with published coefficients, and synthetic curves with
/// known sigma and kappa under seeded noise.</summary>
public sealed class UslKnownAnswerTests(ITestOutputHelper output)
{
    /// <summary>SPEC SDM91 on a Sun SPARCcenter 2000 (load: emulated users; throughput: scripts per hour), the demo data
    /// set of R's <c>usl</c> package (<c>data(specsdm91)</c>). Cross-checked against that package's own test output
    /// (<c>tests/efficiency.Rout.save</c>: efficiency 0.7211 0.6148 0.5100 0.2860 0.1882 0.1370 0.0876 = X / (90 N) at
    /// these loads, to four digits).</summary>
    private static readonly (double Load, double Throughput)[] s_specSdm91 =
    [
        (1, 64.9), (18, 995.9), (36, 1652.4), (72, 1853.2), (108, 1828.9), (144, 1775.0), (216, 1702.2),
    ];

    private static readonly int[] s_levels = [1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128];

    [Fact]
    public void Fit_SpecSdm91LambdaFixedAtX1_RecoversThePublishedCoefficientsWithinTwoPercent()
    {
        // R's usl (before 2.0) normalised by X(1) = 64.9 and fitted sigma and kappa by Gunther's regression; its README
        // prints sigma 1.704689e-02, kappa 7.892498e-05.
        var fit = UslFit.Fit(s_specSdm91, fixedLambda: 64.9)!;
        output.WriteLine($"sigma {fit.Sigma:G6}, kappa {fit.Kappa:G6}, peak {fit.PeakConcurrency:0.0}");
        Assert.InRange(fit.Sigma, 0.98 * 0.01705, 1.02 * 0.01705);
        Assert.InRange(fit.Kappa, 0.98 * 7.892e-5, 1.02 * 7.892e-5);
        Assert.Equal(64.9, fit.Lambda, 9);

        // Gunther's peak for these coefficients: sqrt((1 - sigma) / kappa) = 111 users.
        Assert.InRange(fit.PeakConcurrency!.Value, 110, 113);
    }

    [Fact]
    public void Fit_SpecSdm91_NonlinearFitMatchesRUsl2WithinTwoPercent()
    {
        // R's usl 2.x fits all three parameters by nonlinear least squares on throughput; its README prints
        // alpha (sigma) 0.0277285 and beta (kappa) 0.0001044 for this data set.
        var fit = UslFit.Fit(s_specSdm91)!;
        output.WriteLine($"sigma {fit.Sigma:G6}, kappa {fit.Kappa:G6}, lambda {fit.Lambda:G6}, R2 {fit.R2:0.####}");
        Assert.InRange(fit.Sigma, 0.98 * 0.0277285, 1.02 * 0.0277285);
        Assert.InRange(fit.Kappa, 0.98 * 0.0001044, 1.02 * 0.0001044);
        Assert.InRange(fit.Lambda, 88, 92);
    }

    [Fact]
    public void Fit_SpecSdm91_BootstrapBandHoldsThePublishedCoefficients()
    {
        var fit = UslFit.Fit(s_specSdm91)!;
        var band = UslBand.Bootstrap(s_specSdm91, fit)!;
        output.WriteLine(band.ToString());
        Assert.InRange(0.01705, band.SigmaLow, band.SigmaHigh);
        Assert.InRange(7.892e-5, band.KappaLow, band.KappaHigh);
        Assert.NotNull(band.PeakLow);
        Assert.InRange(fit.PeakConcurrency!.Value, band.PeakLow!.Value, band.PeakHigh ?? double.MaxValue);
    }

    [Theory]
    [InlineData(0.05, 0.001, 100, 1)]
    [InlineData(0.02, 0.0001, 1_000, 2)]
    [InlineData(0.1, 0.0005, 250, 3)]
    [InlineData(0.2, 0.002, 40, 4)]
    public void Fit_SyntheticCurveWithNoise_RecoversSigmaAndKappaWithinTwoPercent(double sigma, double kappa, double lambda, int seed)
    {
        // 0.2% Gaussian noise on throughput (seeded): a long level of thousands of answers measures ok/s that closely.
        var random = new Random(seed);
        var truth = new UslModel(sigma, kappa, lambda, null, 1);
        var points = s_levels.Select(n => ((double)n, truth.Throughput(n) * (1 + (0.002 * Gaussian(random))))).ToArray();
        var fit = UslFit.Fit(points)!;
        output.WriteLine($"sigma {fit.Sigma:G6} (true {sigma}), kappa {fit.Kappa:G6} (true {kappa}), lambda {fit.Lambda:G6} (true {lambda})");
        Assert.InRange(fit.Sigma, 0.98 * sigma, 1.02 * sigma);
        Assert.InRange(fit.Kappa, 0.98 * kappa, 1.02 * kappa);
        Assert.InRange(fit.Lambda, 0.98 * lambda, 1.02 * lambda);
    }

    [Fact]
    public void Bootstrap_NoisyCurve_PeakBandHoldsTheTruePeakAndSaysSoInWords()
    {
        var random = new Random(11);
        var truth = new UslModel(0.05, 0.001, 100, null, 1);
        var points = s_levels.Select(n => ((double)n, truth.Throughput(n) * (1 + (0.03 * Gaussian(random))))).ToArray();
        var band = UslBand.Bootstrap(points, UslFit.Fit(points)!)!;
        output.WriteLine(band.ToString());
        var truePeak = Math.Sqrt(0.95 / 0.001);
        Assert.InRange(truePeak, band.PeakLow!.Value, band.PeakHigh!.Value);
        Assert.InRange(0.05, band.SigmaLow, band.SigmaHigh);
        Assert.StartsWith($"throughput is modelled to peak between {band.PeakLow.Value:0} and {band.PeakHigh.Value:0} at once", band.Plain, StringComparison.Ordinal);
        Assert.Contains("contention", band.Plain, StringComparison.Ordinal);
    }

    [Fact]
    public void Bootstrap_LinearScaling_SaysThereIsNoPeak()
    {
        var points = s_levels.Select(n => ((double)n, 10.0 * n)).ToArray();
        var band = UslBand.Bootstrap(points, UslFit.Fit(points)!)!;
        Assert.Null(band.PeakLow);
        Assert.Null(band.PeakHigh);
        Assert.StartsWith("the data show no peak", band.Plain, StringComparison.Ordinal);
    }

    [Fact]
    public void Bootstrap_TooFewLevels_HasNoBand()
    {
        (double, double)[] points = [(1, 10), (2, 20), (4, 38)];
        Assert.Null(UslBand.Bootstrap(points, UslFit.Fit(points)!));
    }

    [Fact]
    public void Bootstrap_SameData_GivesTheSameBand()
    {
        var points = s_levels.Select(n => ((double)n, 100.0 * n / (1 + (0.05 * (n - 1)) + (0.001 * n * (n - 1))) * (1 + (0.01 * Math.Sin(n))))).ToArray();
        var fit = UslFit.Fit(points)!;
        Assert.Equal(UslBand.Bootstrap(points, fit), UslBand.Bootstrap(points, fit));
    }

    private static double Gaussian(Random random) =>
        Math.Sqrt(-2 * Math.Log(1 - random.NextDouble())) * Math.Cos(2 * Math.PI * random.NextDouble());
}
