namespace FanOut;

/// <summary>Options of <see cref="ConcurrencyLimit.Partitioned{TKey}(int, Func{TKey, ConcurrencyLimit}, PartitionedLimitOptions?)"/>.</summary>
public sealed record PartitionedLimitOptions
{
    /// <summary>Keys known beyond which idle ones (nothing in flight or waiting) are dropped. Default 1,024; 0 drops every idle key.</summary>
    public int MaxIdleKeys { get; init; } = 1024;

    /// <summary>Keys named in the <c>fanout.partition.key</c> metric tag (the first seen); the rest are summed as <c>other</c>. Default 16, at most 1,000.</summary>
    public int MetricKeys { get; init; } = 16;

    internal void Validate()
    {
        if (MaxIdleKeys < 0)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxIdleKeys), MaxIdleKeys, $"MaxIdleKeys is {MaxIdleKeys}; it must be 0 or more.");
        }

        if (MetricKeys is < 0 or > 1000)
        {
            throw new ArgumentOutOfRangeException(nameof(MetricKeys), MetricKeys, $"MetricKeys is {MetricKeys}; it must be between 0 and 1,000.");
        }
    }
}
