using FanOut.Downstream.Latency;

namespace FanOut.Downstream.Tests.Latency;

public class LatencySpecParserTests
{
    [Theory]
    [InlineData("fixed:20", "fixed:20")]
    [InlineData("FIXED:2.5", "fixed:2.5")]
    [InlineData("fixed:0", "fixed:0")]
    [InlineData("  uniform:10-50 ", "uniform:10-50")]
    [InlineData("uniform:7-7", "uniform:7-7")]
    [InlineData("lognormal:20,p99=80", "lognormal:20,p99=80")]
    [InlineData("LogNormal:0.5,P99=1.5", "lognormal:0.5,p99=1.5")]
    public void Parse_ValidSpec_RoundTripsThroughToString(string spec, string expected)
    {
        var parsed = LatencySpec.Parse(spec);

        Assert.Equal(expected, parsed.ToString());
        Assert.Equal(parsed, LatencySpec.Parse(parsed.ToString()));
    }

    [Fact]
    public void Parse_EachKind_ReturnsItsRecordWithItsValues()
    {
        Assert.Equal(new FixedLatency(20), LatencySpec.Parse("fixed:20"));
        Assert.Equal(new UniformLatency(10, 50), LatencySpec.Parse("uniform:10-50"));
        var logNormal = Assert.IsType<LogNormalLatency>(LatencySpec.Parse("lognormal:20,p99=80"));
        Assert.Equal(20, logNormal.MedianMilliseconds);
        Assert.Equal(80, logNormal.P99Milliseconds);
    }

    [Theory]
    [InlineData("", "empty")]
    [InlineData("20", "KIND:ARGS")]
    [InlineData("fixed:", "not a number")]
    [InlineData("fixed:abc", "'abc'")]
    [InlineData("fixed:-1", "'-1'")]
    [InlineData("fixed:1e3", "'1e3'")]
    [InlineData("fixed:NaN", "NaN")]
    [InlineData("fixed:700000", "600000")]
    [InlineData("uniform:10", "MIN-MAX")]
    [InlineData("uniform:50-10", "got 10")]
    [InlineData("uniform:-5-10", "MIN-MAX")]
    [InlineData("lognormal:20", "MEDIAN,p99=P99")]
    [InlineData("lognormal:20,p95=80", "MEDIAN,p99=P99")]
    [InlineData("lognormal:20,p99=10", "got 10")]
    [InlineData("lognormal:0,p99=10", "got 0")]
    [InlineData("gamma:1,2", "unknown kind 'gamma'")]
    public void Parse_InvalidSpec_ThrowsOneLineArgumentExceptionNamingValueAndForms(string spec, string reason)
    {
        var ex = Assert.Throws<ArgumentException>(() => LatencySpec.Parse(spec));

        Assert.Equal("spec", ex.ParamName);
        Assert.Contains($"'{spec.Trim()}'", ex.Message, StringComparison.Ordinal);
        Assert.Contains(reason, ex.Message, StringComparison.Ordinal);
        Assert.Contains(LatencySpec.ValidForms, ex.Message, StringComparison.Ordinal);
        Assert.DoesNotContain('\n', ex.Message.Replace(" (Parameter 'spec')", "", StringComparison.Ordinal));
    }

    [Fact]
    public void TryParse_InvalidSpec_ReturnsFalseWithError()
    {
        Assert.False(LatencySpec.TryParse("fixed:x", out var result, out var error));
        Assert.Null(result);
        Assert.Contains("fixed:x", error, StringComparison.Ordinal);
    }

    [Fact]
    public void Constructors_OutOfRange_ThrowArgumentOutOfRangeNamingParameter()
    {
        Assert.Equal("milliseconds", Assert.Throws<ArgumentOutOfRangeException>(() => new FixedLatency(-1)).ParamName);
        Assert.Equal("maxMilliseconds", Assert.Throws<ArgumentOutOfRangeException>(() => new UniformLatency(5, 4)).ParamName);
        Assert.Equal("p99Milliseconds", Assert.Throws<ArgumentOutOfRangeException>(() => new LogNormalLatency(20, 20)).ParamName);
        Assert.Equal("medianMilliseconds", Assert.Throws<ArgumentOutOfRangeException>(() => new LogNormalLatency(double.PositiveInfinity, 80)).ParamName);
    }
}
