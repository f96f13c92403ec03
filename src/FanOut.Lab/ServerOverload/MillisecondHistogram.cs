namespace FanOut.Lab.ServerOverload;

/// <summary>Durations counted in 1 ms buckets up to 2 s (the client's timeout), lock-free: where inside the service admitted requests spend their time.</summary>
public sealed class MillisecondHistogram
{
    private readonly long[] _counts = new long[2001];

    /// <summary>Counts one duration; longer than 2 s counts as 2 s.</summary>
    public void Add(TimeSpan duration) => Interlocked.Increment(ref _counts[(int)Math.Clamp(duration.TotalMilliseconds, 0, _counts.Length - 1)]);

    /// <summary>Zeroes the counts (between load steps).</summary>
    public void Reset()
    {
        for (var i = 0; i < _counts.Length; i++)
        {
            Interlocked.Exchange(ref _counts[i], 0);
        }
    }

    /// <summary>The duration, in whole milliseconds, that <paramref name="quantile"/> of the counted ones do not exceed; NaN when none was counted.</summary>
    public double Percentile(double quantile)
    {
        var counts = _counts.Select(c => Interlocked.Read(ref c)).ToArray();
        var total = counts.Sum();
        if (total == 0)
        {
            return double.NaN;
        }

        var rank = (long)Math.Ceiling(quantile * total);
        long seen = 0;
        for (var i = 0; i < counts.Length; i++)
        {
            seen += counts[i];
            if (seen >= rank)
            {
                return i;
            }
        }

        return counts.Length - 1;
    }
}
