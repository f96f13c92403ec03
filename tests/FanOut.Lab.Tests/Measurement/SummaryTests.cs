using FanOut.Lab.Measurement;

namespace FanOut.Lab.Tests.Measurement;

public sealed class SummaryTests
{
    [Fact]
    public void Of_OneToFive_MatchesHandComputedStatistics()
    {
        var s = Summary.Of([3, 1, 5, 2, 4]);
        Assert.Equal(5, s.Count);
        Assert.Equal(3.0, s.Mean, 12);
        Assert.Equal(Math.Sqrt(2.5), s.StdDev, 12);
        Assert.Equal(3.0, s.Median, 12);
        Assert.Equal(1.0, s.Min);
        Assert.Equal(5.0, s.Max);

        // t(0.9995, 4) = 8.610302 from tables; error = t * sd / sqrt(n).
        Assert.Equal(8.610302 * Math.Sqrt(2.5) / Math.Sqrt(5), s.Error, 4);
    }

    [Theory]
    [InlineData(1, 636.619)]
    [InlineData(4, 8.610)]
    [InlineData(30, 3.646)]
    public void StudentQuantile_KnownDegreesOfFreedom_MatchesTables(int df, double expected)
    {
        Assert.Equal(expected, Summary.StudentQuantile(df), 2);
    }

    [Fact]
    public void Of_EvenCount_MedianIsMeanOfMiddlePair()
    {
        Assert.Equal(2.5, Summary.Of([4, 1, 3, 2]).Median, 12);
    }

    [Fact]
    public void Of_SingleValue_HasNoErrorAndZeroDeviation()
    {
        var s = Summary.Of([7]);
        Assert.True(double.IsNaN(s.Error));
        Assert.Equal(0, s.StdDev);
    }

    [Fact]
    public void Of_Empty_Throws()
    {
        Assert.Throws<ArgumentException>(() => Summary.Of([]));
    }
}
