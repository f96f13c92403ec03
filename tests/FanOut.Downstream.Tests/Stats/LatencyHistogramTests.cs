using FanOut.Downstream.Stats;

namespace FanOut.Downstream.Tests.Stats;

public class LatencyHistogramTests
{
    [Fact]
    public void IndexOf_EveryValue_FallsInsideItsBucketsBounds()
    {
        // Bucket boundaries are where an off-by-one would hide: check both sides of every power of two.
        var values = Enumerable.Range(0, 38)
            .SelectMany(bit => new[] { (1L << bit) - 1, 1L << bit, (1L << bit) + 1, (1L << bit) * 3 / 2 })
            .Append(LatencyHistogram.MaxMicroseconds)
            .Distinct()
            .Order();
        var previousIndex = -1;
        foreach (var value in values)
        {
            var index = LatencyHistogram.IndexOf(value);
            Assert.True(LatencyHistogram.UpperBoundOf(index) >= value, $"{value} is above its bucket {index}");
            Assert.True(index == 0 || LatencyHistogram.UpperBoundOf(index - 1) < value, $"{value} belongs to bucket {index - 1}");
            Assert.True(index >= previousIndex, "Buckets are ordered by value.");
            Assert.True(LatencyHistogram.UpperBoundOf(index) <= Math.Max(value * 1.016, value + 1), $"Bucket {index} of {value} is wider than 1.6%");
            previousIndex = index;
        }
    }

    [Fact]
    public void ValueAtPercentile_KnownValues_WithinOnePointSixPercent()
    {
        var histogram = new LatencyHistogram();
        for (var ms = 1; ms <= 100; ms++)
        {
            histogram.Record(ms * 1000L);    // 1..100 ms in microseconds
        }

        Assert.Equal(100, histogram.Count);
        Assert.InRange(histogram.ValueAtPercentile(50), 50_000, 50_000 * 1.016);
        Assert.InRange(histogram.ValueAtPercentile(95), 95_000, 95_000 * 1.016);
        Assert.InRange(histogram.ValueAtPercentile(99), 99_000, 99_000 * 1.016);
        Assert.Equal(100_000, histogram.ValueAtPercentile(100));
        Assert.Equal(100_000, histogram.Max);
    }

    [Fact]
    public void ValueAtPercentile_SmallValues_AreExact()
    {
        var histogram = new LatencyHistogram();
        histogram.Record(3);
        histogram.Record(5);
        histogram.Record(127);

        Assert.Equal(3, histogram.ValueAtPercentile(33));
        Assert.Equal(5, histogram.ValueAtPercentile(50));
        Assert.Equal(127, histogram.ValueAtPercentile(99));
    }

    [Fact]
    public void Clear_AfterRecords_EmptiesEverything()
    {
        var histogram = new LatencyHistogram();
        histogram.Record(20_000);
        histogram.Record(long.MaxValue);    // clamped, not thrown

        histogram.Clear();

        Assert.Equal(0, histogram.Count);
        Assert.Equal(0, histogram.Max);
        Assert.Equal(0, histogram.ValueAtPercentile(99));
    }
}
