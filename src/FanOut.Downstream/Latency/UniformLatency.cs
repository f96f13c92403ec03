namespace FanOut.Downstream.Latency;

/// <summary>Latency drawn uniformly from [min, max]: SPEC <c>uniform:MIN-MAX</c>.</summary>
public sealed record UniformLatency : LatencySpec
{
    /// <summary>Creates a uniform latency.</summary>
    /// <param name="minMilliseconds">The lower bound, at least 0.</param>
    /// <param name="maxMilliseconds">The upper bound, at least <paramref name="minMilliseconds"/>.</param>
    /// <exception cref="ArgumentOutOfRangeException">A bound is out of range, or min exceeds max.</exception>
    public UniformLatency(double minMilliseconds, double maxMilliseconds)
    {
        ThrowIfNotLatency(minMilliseconds, nameof(minMilliseconds));
        ThrowIfNotLatency(maxMilliseconds, nameof(maxMilliseconds), minMilliseconds);
        MinMilliseconds = minMilliseconds;
        MaxMilliseconds = maxMilliseconds;
    }

    /// <summary>The lower bound.</summary>
    /// <value>In [0, 600000] ms.</value>
    public double MinMilliseconds { get; }

    /// <summary>The upper bound.</summary>
    /// <value>In [<see cref="MinMilliseconds"/>, 600000] ms.</value>
    public double MaxMilliseconds { get; }

    /// <inheritdoc/>
    public override double MeanMilliseconds => (MinMilliseconds + MaxMilliseconds) / 2;

    internal override double SampleMilliseconds(Random random)
        => MinMilliseconds + (random.NextDouble() * (MaxMilliseconds - MinMilliseconds));

    /// <inheritdoc/>
    public override string ToString() => $"uniform:{Format(MinMilliseconds)}-{Format(MaxMilliseconds)}";
}
