namespace FanOut.Downstream.Latency;

/// <summary>Every request takes the same time: SPEC <c>fixed:MS</c>.</summary>
public sealed record FixedLatency : LatencySpec
{
    /// <summary>Creates a fixed latency.</summary>
    /// <param name="milliseconds">The latency; 0 means no simulated work.</param>
    /// <exception cref="ArgumentOutOfRangeException">Not finite or outside [0, <see cref="LatencySpec.MaxSupportedMilliseconds"/>].</exception>
    public FixedLatency(double milliseconds)
    {
        ThrowIfNotLatency(milliseconds, nameof(milliseconds));
        Milliseconds = milliseconds;
    }

    /// <summary>The latency of every request.</summary>
    /// <value>In [0, 600000] ms.</value>
    public double Milliseconds { get; }

    /// <inheritdoc/>
    public override double MeanMilliseconds => Milliseconds;

    internal override double SampleMilliseconds(Random random) => Milliseconds;

    /// <inheritdoc/>
    public override string ToString() => $"fixed:{Format(Milliseconds)}";
}
