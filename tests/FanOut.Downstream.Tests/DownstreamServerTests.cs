using System.Net;
using System.Net.Sockets;

using FanOut.Downstream.Endpoints;
using FanOut.Downstream.Latency;

namespace FanOut.Downstream.Tests;

public class DownstreamServerTests
{
    private static readonly DownstreamOptions s_instant = new() { Latency = new FixedLatency(0) };

    [Fact]
    public async Task Price_SameId_ReturnsTheDeterministicPrice()
    {
        await using var server = await DownstreamServer.StartAsync(s_instant);
        using var client = TestServer.ClientFor(server);

        var first = await TestServer.GetJsonAsync<PriceResponse>(client, "price/42");
        var second = await TestServer.GetJsonAsync<PriceResponse>(client, "price/42");
        var other = await TestServer.GetJsonAsync<PriceResponse>(client, "price/43");

        Assert.Equal(new PriceResponse("42", PriceCatalog.PriceOf("42")), first);
        Assert.Equal(first, second);
        Assert.NotEqual(first!.Price, other!.Price);
        Assert.InRange(first.Price, 1.00m, 999.99m);
    }

    [Fact]
    public async Task Item_Id_ReturnsSmallJsonEchoingIt()
    {
        await using var server = await DownstreamServer.StartAsync(s_instant);
        using var client = TestServer.ClientFor(server);

        var body = await client.GetStringAsync(new Uri("item/abc", UriKind.Relative));

        Assert.Equal("""{"id":"abc","name":"item-abc","workMs":0}""", body);
    }

    [Fact]
    public async Task StopAsync_Running_ClosesTheListenerAndIsIdempotent()
    {
        var server = await DownstreamServer.StartAsync(s_instant);
        using var client = TestServer.ClientFor(server);
        Assert.Equal(HttpStatusCode.OK, await TestServer.GetItemStatusAsync(client, 1));

        await server.StopAsync();
        await server.StopAsync();

        await Assert.ThrowsAsync<HttpRequestException>(() => TestServer.GetItemStatusAsync(client, 2));
        await server.DisposeAsync();
        await server.DisposeAsync();
    }

    [Fact]
    public async Task StartAsync_PortInUse_ThrowsIOException()
    {
        await using var first = await DownstreamServer.StartAsync(s_instant);

        await Assert.ThrowsAsync<IOException>(() => DownstreamServer.StartAsync(s_instant with { Port = first.BaseAddress.Port }));
    }

    [Fact]
    public async Task StartAsync_ExplicitPort_ListensThere()
    {
        int port;
        using (var probe = new TcpListener(IPAddress.Loopback, 0))
        {
            probe.Start();
            port = ((IPEndPoint)probe.LocalEndpoint).Port;
        }

        await using var server = await DownstreamServer.StartAsync(s_instant with { Port = port });

        Assert.Equal(new Uri($"http://127.0.0.1:{port}/"), server.BaseAddress);
    }
}
