using System.Net;

using FanOut.Downstream.Hosting;
using FanOut.Downstream.Latency;

namespace FanOut.Downstream.Tests.Hosting;

public class LoopbackGuardTests
{
    [Theory]
    [InlineData("127.0.0.1", true)]
    [InlineData("127.1.2.3", true)]
    [InlineData("::1", true)]
    [InlineData("::ffff:127.0.0.1", true)]
    [InlineData("0.0.0.0", false)]
    [InlineData("::", false)]
    [InlineData("10.0.0.1", false)]
    [InlineData("192.0.2.2", false)]
    [InlineData("128.0.0.1", false)]
    [InlineData("::ffff:10.0.0.1", false)]
    [InlineData("fe80::1", false)]
    public void IsLoopback_Address_OnlyLoopbackIsAllowed(string address, bool expected)
        => Assert.Equal(expected, LoopbackGuard.IsLoopback(IPAddress.Parse(address)));

    [Fact]
    public void IsLoopback_NoRemoteAddress_IsRefused()
        => Assert.False(LoopbackGuard.IsLoopback(null));

    [Theory]
    [InlineData("0.0.0.0")]
    [InlineData("::")]
    [InlineData("192.168.1.10")]
    public async Task StartAsync_NonLoopbackAddress_ThrowsArgumentExceptionNamingIt(string address)
    {
        var options = new DownstreamOptions { Address = IPAddress.Parse(address) };

        var ex = await Assert.ThrowsAsync<ArgumentException>(() => DownstreamServer.StartAsync(options));

        Assert.Equal(nameof(DownstreamOptions.Address), ex.ParamName);
        Assert.Contains($"{IPAddress.Parse(address)} is not loopback", ex.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("127.0.0.2")]
    [InlineData("::1")]
    public void Validate_OtherLoopbackAddresses_AreAccepted(string address)
        => new DownstreamOptions { Address = IPAddress.Parse(address) }.Validate();

    [Fact]
    public async Task StartAsync_Defaults_ListensOnLoopbackOnly()
    {
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions { Latency = new FixedLatency(0) });
        using var client = TestServer.ClientFor(server);

        Assert.Equal("127.0.0.1", server.BaseAddress.Host);
        Assert.NotEqual(0, server.BaseAddress.Port);
        Assert.Equal(HttpStatusCode.OK, await TestServer.GetItemStatusAsync(client, 1));   // the guard lets loopback through
    }
}
