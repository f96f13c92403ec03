using System.Globalization;

namespace FanOut.Lab.Probing;

/// <summary>How sure the USL fit is: 95% bootstrap intervals over the levels, <c>uslBand</c> in probe.json.</summary>
/// <param name="Resamples">Bootstrap resamples that could be fitted (each draws as many levels as were measured, with replacement).</param>
/// <param name="SigmaLow">2.5th percentile of sigma.</param>
/// <param name="SigmaHigh">97.5th percentile of sigma.</param>
/// <param name="KappaLow">2.5th percentile of kappa.</param>
/// <param name="KappaHigh">97.5th percentile of kappa.</param>
/// <param name="PeakLow">2.5th percentile of the peak concurrency; null when too few resamples have a peak.</param>
/// <param name="PeakHigh">97.5th percentile of the peak concurrency; null when more than 2.5% of resamples never turn down (kappa 0).</param>
/// <param name="Plain">The band in plain words.</param>
public sealed record UslBand(int Resamples, double SigmaLow, double SigmaHigh, double KappaLow, double KappaHigh, double? PeakLow, double? PeakHigh, string Plain)
{
    /// <summary>Resamples drawn.</summary>
    public const int DefaultResamples = 400;

    /// <summary>The bootstrap of <paramref name="points"/> around <paramref name="fit"/>: resample the levels with
    /// replacement (fixed seed, so the same levels give the same band), refit each, take the 2.5th and 97.5th percentiles.
    /// Null when fewer than four distinct concurrencies were measured (three parameters leave nothing to resample).</summary>
    public static UslBand? Bootstrap(IReadOnlyList<(double Concurrency, double Throughput)> points, UslModel fit, int resamples = DefaultResamples, int seed = 19)
    {
        ArgumentNullException.ThrowIfNull(points);
        ArgumentNullException.ThrowIfNull(fit);
        var usable = points.Where(p => p.Concurrency >= 1 && p.Throughput > 0).ToArray();
        if (usable.Select(p => p.Concurrency).Distinct().Count() < 4)
        {
            return null;
        }

        // A peak past ten times the highest level measured is no peak the data can speak for: counted as none.
        var reach = 10 * usable.Max(p => p.Concurrency);
        var random = new Random(seed);
        var sigmas = new List<double>();
        var kappas = new List<double>();
        var peaks = new List<double>();
        for (var i = 0; i < resamples; i++)
        {
            var sample = Enumerable.Range(0, usable.Length).Select(_ => usable[random.Next(usable.Length)]).ToArray();
            if (sample.Select(p => p.Concurrency).Distinct().Count() < 3 || UslFit.Fit(sample) is not { } model)
            {
                continue;
            }

            sigmas.Add(model.Sigma);
            kappas.Add(model.Kappa);
            peaks.Add(model.PeakConcurrency is { } peak && peak <= reach ? peak : double.PositiveInfinity);
        }

        if (sigmas.Count < resamples / 2)
        {
            return null;
        }

        var (sigmaLow, sigmaHigh) = Interval(sigmas);
        var (kappaLow, kappaHigh) = Interval(kappas);
        var (peakLow, peakHigh) = Interval(peaks);
        double? low = double.IsFinite(peakLow) ? peakLow : null;
        double? high = double.IsFinite(peakHigh) ? peakHigh : null;
        return new UslBand(sigmas.Count, sigmaLow, sigmaHigh, kappaLow, kappaHigh, low, high, Describe(fit, sigmaLow, sigmaHigh, low, high));
    }

    private static (double Low, double High) Interval(List<double> values)
    {
        var sorted = values.Order().ToArray();
        double At(double q) => sorted[Math.Clamp((int)Math.Round(q * (sorted.Length - 1)), 0, sorted.Length - 1)];
        return (At(0.025), At(0.975));
    }

    private static string Describe(UslModel fit, double sigmaLow, double sigmaHigh, double? peakLow, double? peakHigh)
    {
        var serial = $"contention (sigma {F(fit.Sigma, "0.####")}, 95% between {F(sigmaLow, "0.####")} and {F(sigmaHigh, "0.####")}): about {F(100 * fit.Sigma, "0.#")}% of each request's work waits its turn behind the others";
        var peak = (peakLow, peakHigh) switch
        {
            ({ } low, { } high) => $"throughput is modelled to peak between {F(low, "0")} and {F(high, "0")} at once (95% of resamples) and to fall beyond, as in-flight requests spend more time coordinating (coherency, kappa)",
            ({ } low, null) => $"throughput is modelled to peak at {F(low, "0")} at once or more; some resamples never turn down, so the data cannot rule out that it just levels off",
            _ => "the data show no peak: throughput levels off rather than falls (kappa near 0)",
        };
        return $"{peak}; {serial}.";
    }

    private static string F(double value, string format) => value.ToString(format, CultureInfo.InvariantCulture);
}
