using System.Diagnostics;
using System.Numerics;

namespace FanOut.Downstream.Stats;

/// <summary>A fixed-size log-linear histogram of latencies in microseconds (HdrHistogram's bucket scheme, 64 sub-buckets per power of two).</summary>
/// <remarks>
/// Chosen over storing samples or a reservoir: recording is one array increment (no allocation, no
/// growth), memory is fixed (~17 KB), percentiles are exact up to a relative error of 1/64 (1.6%),
/// and every recorded sample counts (a reservoir would drop samples and make p99 noisy).
/// Values below 128 us are exact. Values above <see cref="MaxMicroseconds"/> (~38 h) are clamped.
/// Not thread-safe: <see cref="ServerCounters"/> calls it under its lock.
/// </remarks>
internal sealed class LatencyHistogram
{
    private const int SubBucketBits = 6;                       // 64 sub-buckets per power of two
    private const int SubBucketCount = 1 << SubBucketBits;
    private const int LinearLimit = 2 * SubBucketCount;        // values below 128 get their own bucket
    private const int MaxBit = 37;

    /// <summary>The largest value kept as is; larger values are recorded as this value.</summary>
    public const long MaxMicroseconds = (1L << (MaxBit + 1)) - 1;

    private readonly long[] _counts = new long[IndexOf(MaxMicroseconds) + 1];
    private long _count;
    private long _max;

    /// <summary>The number of recorded values.</summary>
    public long Count => _count;

    /// <summary>The largest recorded value, in microseconds (0 when empty).</summary>
    public long Max => _max;

    /// <summary>Records one latency.</summary>
    public void Record(long microseconds)
    {
        var value = Math.Clamp(microseconds, 0, MaxMicroseconds);
        _counts[IndexOf(value)]++;
        _count++;
        _max = Math.Max(_max, value);
    }

    /// <summary>Forgets every recorded value.</summary>
    public void Clear()
    {
        Array.Clear(_counts);
        _count = 0;
        _max = 0;
    }

    /// <summary>The value at <paramref name="percentile"/> (0..100), in microseconds: the upper bound of the bucket holding the rank, capped at the maximum; 0 when empty.</summary>
    /// <remarks>The upper bound never under-reports; the cap keeps a p100 (and a one-bucket histogram) exact.</remarks>
    public long ValueAtPercentile(double percentile)
    {
        Debug.Assert(percentile is >= 0 and <= 100, "A percentile is in [0, 100].");
        if (_count == 0)
        {
            return 0;
        }

        // Nearest-rank: the smallest value with at least p% of the samples at or below it.
        var rank = Math.Max(1, (long)Math.Ceiling(percentile / 100.0 * _count));
        long seen = 0;
        for (var i = 0; i < _counts.Length; i++)
        {
            seen += _counts[i];
            if (seen >= rank)
            {
                return Math.Min(UpperBoundOf(i), _max);
            }
        }

        return _max;
    }

    /// <summary>The bucket of <paramref name="value"/>: exact below 128, then 64 buckets per power of two.</summary>
    internal static int IndexOf(long value)
    {
        if (value < LinearLimit)
        {
            return (int)value;
        }

        var highBit = 63 - BitOperations.LeadingZeroCount((ulong)value);  // >= 7
        var shift = highBit - SubBucketBits;                              // >= 1
        var subBucket = (int)(value >> shift);                            // in [64, 127]
        return LinearLimit + ((shift - 1) * SubBucketCount) + (subBucket - SubBucketCount);
    }

    /// <summary>The largest value that falls in bucket <paramref name="index"/>.</summary>
    internal static long UpperBoundOf(int index)
    {
        if (index < LinearLimit)
        {
            return index;
        }

        var shift = ((index - LinearLimit) / SubBucketCount) + 1;
        var subBucket = ((index - LinearLimit) % SubBucketCount) + SubBucketCount;
        return ((long)(subBucket + 1) << shift) - 1;
    }
}
