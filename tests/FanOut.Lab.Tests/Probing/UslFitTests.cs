using FanOut.Lab.Probing;

namespace FanOut.Lab.Tests.Probing;

public sealed class UslFitTests
{
    private static readonly int[] s_levels = [1, 2, 4, 8, 16, 32, 64, 128];

    private static (double, double)[] Curve(double sigma, double kappa, double lambda, Func<int, double>? noise = null)
    {
        var model = new UslModel(sigma, kappa, lambda, null, 1);
        return s_levels.Select(n => ((double)n, model.Throughput(n) * (noise?.Invoke(n) ?? 1))).ToArray();
    }

    [Theory]
    [InlineData(0.05, 0.001, 100)]
    [InlineData(0.2, 0.0001, 1_000)]
    [InlineData(0.0, 0.002, 50)]
    public void Fit_NoiselessCurve_RecoversExactParameters(double sigma, double kappa, double lambda)
    {
        var fit = UslFit.Fit(Curve(sigma, kappa, lambda))!;
        Assert.Equal(sigma, fit.Sigma, 9);
        Assert.Equal(kappa, fit.Kappa, 12);
        Assert.Equal(lambda, fit.Lambda, 6);
        Assert.Equal(Math.Sqrt((1 - sigma) / kappa), fit.PeakConcurrency!.Value, 6);
        Assert.Equal(1.0, fit.R2, 9);
    }

    [Fact]
    public void Fit_LinearScaling_HasNoContentionNoCoherencyAndNoPeak()
    {
        var fit = UslFit.Fit(Curve(0, 0, 40))!;
        Assert.Equal(0, fit.Sigma, 9);
        Assert.Equal(0, fit.Kappa, 12);
        Assert.Equal(40, fit.Lambda, 6);
        Assert.Null(fit.PeakConcurrency);
    }

    [Fact]
    public void Fit_NoisyCurve_StaysNearTheTrueParameters()
    {
        // 5% multiplicative noise, seeded: the peak moves by well under a quarter, sigma and lambda stay close.
        var random = new Random(7);
        var noisy = Curve(0.05, 0.001, 100, _ => 1 + ((random.NextDouble() - 0.5) * 0.1));
        var fit = UslFit.Fit(noisy)!;
        Assert.InRange(fit.Lambda, 90, 110);
        Assert.InRange(fit.Sigma, 0.02, 0.08);
        Assert.InRange(fit.PeakConcurrency!.Value, 0.75 * 30.8, 1.25 * 30.8);
        Assert.True(fit.R2 > 0.95, $"R2 {fit.R2}");
    }

    [Fact]
    public void Fit_SameNoisyData_GivesTheSameAnswer()
    {
        var first = UslFit.Fit(Curve(0.1, 0.0005, 200, n => 1 + (0.03 * Math.Sin(n))));
        var second = UslFit.Fit(Curve(0.1, 0.0005, 200, n => 1 + (0.03 * Math.Sin(n))));
        Assert.Equal(first, second);
    }

    [Fact]
    public void Fit_HardCapacityCurve_KeepsCoefficientsNonNegative()
    {
        // Linear to 24, then flat: what a server with 24 slots and a queue gives. The unconstrained fit wants kappa < 0.
        var points = s_levels.Select(n => ((double)n, 1000.0 * Math.Min(n, 24) / 24)).ToArray();
        var fit = UslFit.Fit(points)!;
        Assert.True(fit.Sigma >= 0 && fit.Kappa >= 0, $"sigma {fit.Sigma}, kappa {fit.Kappa}");
        Assert.True(fit.R2 > 0.8, $"R2 {fit.R2}");
    }

    [Fact]
    public void Fit_NoPositivePoint_ReturnsNull() =>
        Assert.Null(UslFit.Fit([(1, 0), (2, 0)]));

    [Fact]
    public void Fit_OnePoint_IsLinearThroughIt()
    {
        var fit = UslFit.Fit([(4, 200)])!;
        Assert.Equal(50, fit.Lambda, 9);
        Assert.Equal(0, fit.Sigma);
        Assert.Equal(0, fit.Kappa);
    }
}
