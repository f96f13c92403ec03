namespace FanOut.Downstream.Latency;

/// <summary>A long-tailed latency given by its median and 99th percentile: SPEC <c>lognormal:MEDIAN,p99=P99</c>.</summary>
/// <remarks>
/// ln(latency) is normal with mu = ln(median) and sigma = ln(p99 / median) / z99, z99 = 2.3263 (the
/// standard normal's 99th percentile), so the distribution's median and p99 are exactly the given values.
/// Samples are not capped: a draw beyond the p99 is what a tail is. Even a 1-in-a-billion draw
/// (z = 6) is only (p99/median)^2.6 times the median, e.g. 36x for p99 = 4 x median.
/// </remarks>
public sealed record LogNormalLatency : LatencySpec
{
    /// <summary>The standard normal distribution's 99th percentile.</summary>
    internal const double Z99 = 2.3263478740408408;

    /// <summary>Creates a log-normal latency.</summary>
    /// <param name="medianMilliseconds">The median, greater than 0.</param>
    /// <param name="p99Milliseconds">The 99th percentile, greater than the median.</param>
    /// <exception cref="ArgumentOutOfRangeException">A value is out of range, or p99 is not above the median.</exception>
    public LogNormalLatency(double medianMilliseconds, double p99Milliseconds)
    {
        ThrowIfNotLatency(medianMilliseconds, nameof(medianMilliseconds), 0, exclusive: true);
        ThrowIfNotLatency(p99Milliseconds, nameof(p99Milliseconds), medianMilliseconds, exclusive: true);
        MedianMilliseconds = medianMilliseconds;
        P99Milliseconds = p99Milliseconds;
        _mu = Math.Log(medianMilliseconds);
        _sigma = Math.Log(p99Milliseconds / medianMilliseconds) / Z99;
    }

    /// <summary>The median latency.</summary>
    /// <value>In (0, 600000] ms.</value>
    public double MedianMilliseconds { get; }

    /// <summary>The 99th-percentile latency.</summary>
    /// <value>In (<see cref="MedianMilliseconds"/>, 600000] ms.</value>
    public double P99Milliseconds { get; }

    /// <inheritdoc/>
    /// <remarks>exp(mu + sigma^2 / 2): for <c>lognormal:20,p99=80</c> 23.9 ms, 1.195 times the median.</remarks>
    public override double MeanMilliseconds => Math.Exp(_mu + (_sigma * _sigma / 2));

    private readonly double _mu;
    private readonly double _sigma;

    internal override double SampleMilliseconds(Random random)
    {
        // Box-Muller; 1 - NextDouble() is in (0, 1], so the logarithm is finite.
        var u1 = 1.0 - random.NextDouble();
        var u2 = random.NextDouble();
        var z = Math.Sqrt(-2.0 * Math.Log(u1)) * Math.Cos(2.0 * Math.PI * u2);
        return Math.Exp(_mu + (_sigma * z));
    }

    /// <inheritdoc/>
    public override string ToString() => $"lognormal:{Format(MedianMilliseconds)},p99={Format(P99Milliseconds)}";
}
