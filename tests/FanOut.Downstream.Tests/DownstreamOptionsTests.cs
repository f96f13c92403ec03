using System.Net;

namespace FanOut.Downstream.Tests;

public class DownstreamOptionsTests
{
    public static TheoryData<DownstreamOptions, string> OutOfRange => new()
    {
        { new DownstreamOptions { Port = -1 }, nameof(DownstreamOptions.Port) },
        { new DownstreamOptions { Port = 65536 }, nameof(DownstreamOptions.Port) },
        { new DownstreamOptions { Capacity = 0 }, nameof(DownstreamOptions.Capacity) },
        { new DownstreamOptions { Capacity = DownstreamOptions.MaxCapacity + 1 }, nameof(DownstreamOptions.Capacity) },
        { new DownstreamOptions { Queue = -1 }, nameof(DownstreamOptions.Queue) },
        { new DownstreamOptions { Queue = DownstreamOptions.MaxQueue + 1 }, nameof(DownstreamOptions.Queue) },
        { new DownstreamOptions { RatePerSecond = 0 }, nameof(DownstreamOptions.RatePerSecond) },
        { new DownstreamOptions { RatePerSecond = double.NaN }, nameof(DownstreamOptions.RatePerSecond) },
        { new DownstreamOptions { RatePerSecond = 2_000_000 }, nameof(DownstreamOptions.RatePerSecond) },
        { new DownstreamOptions { RatePerSecond = 10, RateBurst = 0 }, nameof(DownstreamOptions.RateBurst) },
        { new DownstreamOptions { CrashAfterRequests = -1 }, nameof(DownstreamOptions.CrashAfterRequests) },
    };

    [Theory]
    [MemberData(nameof(OutOfRange))]
    public void Validate_OutOfRange_ThrowsNamingOptionAndRange(DownstreamOptions options, string option)
    {
        var ex = Assert.Throws<ArgumentOutOfRangeException>(options.Validate);

        Assert.Equal(option, ex.ParamName);
        Assert.Contains("must be", ex.Message, StringComparison.Ordinal);
        Assert.Contains("got", ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Validate_Defaults_DoNotThrow()
    {
        var options = new DownstreamOptions();

        options.Validate();

        Assert.Equal(IPAddress.Loopback, options.Address);
        Assert.Equal(0, options.Port);
        Assert.Equal("fixed:20", options.Latency.ToString());
    }

    [Fact]
    public void Validate_NullLatency_ThrowsArgumentNull()
        => Assert.Equal("Latency", Assert.Throws<ArgumentNullException>(new DownstreamOptions { Latency = null! }.Validate).ParamName);

    [Theory]
    [InlineData(0.05, null, 1)]       // a tenth of a second's worth, at least 1
    [InlineData(100, null, 10)]
    [InlineData(1005, null, 101)]
    [InlineData(100, 3, 3)]
    public void EffectiveRateBurst_RateAndBurst_IsTheTokenBucketSize(double rate, int? burst, int expected)
        => Assert.Equal(expected, new DownstreamOptions { RatePerSecond = rate, RateBurst = burst }.EffectiveRateBurst);

    [Fact]
    public async Task StartAsync_InvalidOptions_ThrowsBeforeBinding()
        => await Assert.ThrowsAsync<ArgumentOutOfRangeException>(() => DownstreamServer.StartAsync(new DownstreamOptions { Capacity = 0 }));
}
