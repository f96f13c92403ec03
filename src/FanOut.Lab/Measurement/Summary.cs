using Perfolizer.Mathematics.Distributions.ContinuousDistributions;

namespace FanOut.Lab.Measurement;

/// <summary>The statistics of a case's measured runs, as BenchmarkDotNet reports them.</summary>
/// <param name="Count">Number of runs.</param>
/// <param name="Mean">Arithmetic mean.</param>
/// <param name="Error">Half of the 99.9% confidence interval of the mean (Student's t); NaN with fewer than two runs.</param>
/// <param name="StdDev">Sample standard deviation (n - 1); 0 with one run.</param>
/// <param name="Median">Median (mean of the two middle values for an even count).</param>
/// <param name="Min">Smallest value.</param>
/// <param name="Max">Largest value.</param>
public sealed record Summary(int Count, double Mean, double Error, double StdDev, double Median, double Min, double Max)
{
    /// <summary>The confidence level of <see cref="Error"/>, BenchmarkDotNet's default.</summary>
    public const double ConfidenceLevel = 0.999;

    /// <summary>Summarises <paramref name="values"/>, which must hold at least one value.</summary>
    public static Summary Of(IReadOnlyList<double> values)
    {
        ArgumentNullException.ThrowIfNull(values);
        if (values.Count == 0)
        {
            throw new ArgumentException("A summary needs at least one value.", nameof(values));
        }

        var sorted = values.Order().ToArray();
        var n = sorted.Length;
        var mean = sorted.Average();
        var stdDev = n > 1 ? Math.Sqrt(sorted.Sum(v => (v - mean) * (v - mean)) / (n - 1)) : 0.0;
        var median = n % 2 == 1 ? sorted[n / 2] : (sorted[(n / 2) - 1] + sorted[n / 2]) / 2;
        var error = n > 1 ? StudentQuantile(n - 1) * stdDev / Math.Sqrt(n) : double.NaN;
        return new Summary(n, mean, error, stdDev, median, sorted[0], sorted[^1]);
    }

    /// <summary>The two-sided Student's t quantile for <see cref="ConfidenceLevel"/> at <paramref name="degreesOfFreedom"/>.</summary>
    public static double StudentQuantile(int degreesOfFreedom) =>
        new StudentDistribution(degreesOfFreedom).Quantile(1 - ((1 - ConfidenceLevel) / 2));
}
