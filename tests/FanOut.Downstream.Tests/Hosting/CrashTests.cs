using System.Net;

using FanOut.Downstream.Latency;

namespace FanOut.Downstream.Tests.Hosting;

/// <summary>
/// A crash must show as <see cref="HttpRequestException"/> (reset or refused connection). A hang
/// would instead end in the client's 10 s timeout as TaskCanceledException, failing these asserts.
/// </summary>
public class CrashTests
{
    [Fact]
    public async Task Item_AfterKRequests_LaterRequestsFailFastWithConnectionErrors()
    {
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions { CrashAfterRequests = 3, Latency = new FixedLatency(0) });
        using var client = TestServer.ClientFor(server);

        for (var i = 0; i < 3; i++)
        {
            Assert.Equal(HttpStatusCode.OK, await TestServer.GetItemStatusAsync(client, i));
        }

        await Assert.ThrowsAsync<HttpRequestException>(() => TestServer.GetItemStatusAsync(client, 3));
        Assert.True(server.HasCrashed);
        await Assert.ThrowsAsync<HttpRequestException>(() => TestServer.GetItemStatusAsync(client, 4));
        using var fresh = TestServer.ClientFor(server);
        await Assert.ThrowsAsync<HttpRequestException>(() => TestServer.GetItemStatusAsync(fresh, 5));
        Assert.Equal(3, server.GetStats().RequestsServed);
    }

    [Fact]
    public async Task Item_CrashWhileRequestsInFlight_TheyFailInsteadOfHanging()
    {
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions
        {
            CrashAfterRequests = 2,
            Latency = new FixedLatency(30_000),
        });
        using var client = TestServer.ClientFor(server);
        var inFlight = new[] { TestServer.GetItemStatusAsync(client, 1), TestServer.GetItemStatusAsync(client, 2) };
        await TestServer.WaitForStatsAsync(client, s => s.InFlight == 2);

        await Assert.ThrowsAsync<HttpRequestException>(() => TestServer.GetItemStatusAsync(client, 3));

        foreach (var request in inFlight)
        {
            await Assert.ThrowsAsync<HttpRequestException>(() => request);
        }

        // The client sees the reset before the server's handlers have counted their aborts (a CI run read 1 here): wait for them.
        await TestServer.WaitUntilAsync(() => server.GetStats().RequestsCancelled >= 2, "the two requests in flight were never counted cancelled");
        var stats = server.GetStats();
        Assert.Equal(0, stats.RequestsServed);
        Assert.Equal(2, stats.RequestsCancelled);
    }

    [Fact]
    public async Task CrashAsync_Running_LaterRequestsAreRefused()
    {
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions { Latency = new FixedLatency(0) });
        using var client = TestServer.ClientFor(server);
        Assert.Equal(HttpStatusCode.OK, await TestServer.GetItemStatusAsync(client, 1));

        await server.CrashAsync();

        Assert.True(server.HasCrashed);
        await Assert.ThrowsAsync<HttpRequestException>(() => TestServer.GetItemStatusAsync(client, 2));
        await Assert.ThrowsAsync<HttpRequestException>(() => client.GetStringAsync(new Uri("stats", UriKind.Relative)));
    }
}
