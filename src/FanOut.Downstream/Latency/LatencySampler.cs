using System.Diagnostics;

namespace FanOut.Downstream.Latency;

/// <summary>Draws latencies from a <see cref="LatencySpec"/> with a seeded random source; thread-safe.</summary>
/// <remarks>
/// The sequence of samples is fixed by the seed. Under concurrency, which request gets which sample
/// depends on arrival order, so only the multiset of the first n samples is reproducible, not the
/// per-request assignment. A short lock guards the <see cref="Random"/> (which is not thread-safe):
/// one uncontended lock per request is noise next to a millisecond-scale simulated latency, and a
/// per-thread Random would make the sequence depend on thread scheduling.
/// </remarks>
public sealed class LatencySampler
{
    private readonly Random _random;
    private LatencySpec _spec;
    private readonly Lock _lock = new();

    /// <summary>Creates a sampler.</summary>
    /// <param name="spec">The distribution.</param>
    /// <param name="seed">The random seed; the same seed gives the same sequence.</param>
    public LatencySampler(LatencySpec spec, int seed)
    {
        ArgumentNullException.ThrowIfNull(spec);
        _spec = spec;
        _random = new Random(seed);
    }

    /// <summary>The distribution this sampler draws from; set it to draw the next samples from another (the seeded sequence goes on).</summary>
    public LatencySpec Spec
    {
        get
        {
            lock (_lock)
            {
                return _spec;
            }
        }

        set
        {
            ArgumentNullException.ThrowIfNull(value);
            lock (_lock)
            {
                _spec = value;
            }
        }
    }

    /// <summary>Draws the next latency, in milliseconds (never negative).</summary>
    /// <returns>A latency in milliseconds.</returns>
    public double NextMilliseconds()
    {
        double sample;
        lock (_lock)
        {
            sample = _spec.SampleMilliseconds(_random);
        }

        Debug.Assert(sample >= 0 && double.IsFinite(sample), "A latency sample is finite and non-negative.");
        return sample;
    }
}
