using System.Net;

using FanOut.Downstream.Latency;

namespace FanOut.Downstream.Tests.Endpoints;

public class RateLimitTests
{
    [Fact]
    public async Task Item_BucketEmpty_Answers429WithRetryAfter()
    {
        // 0.2 requests/s: the bucket refills one token every 5 s, so the third request within a few
        // milliseconds finds it empty however slow the machine is (short of a 5 s stall).
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions
        {
            RatePerSecond = 0.2,
            RateBurst = 2,
            Latency = new FixedLatency(0),
        });
        using var client = TestServer.ClientFor(server);

        Assert.Equal(HttpStatusCode.OK, await TestServer.GetItemStatusAsync(client, 1));
        Assert.Equal(HttpStatusCode.OK, await TestServer.GetItemStatusAsync(client, 2));
        using var rejected = await client.GetAsync(new Uri("price/3", UriKind.Relative));

        Assert.Equal(HttpStatusCode.TooManyRequests, rejected.StatusCode);
        Assert.Equal("rate-limit", Assert.Single(rejected.Headers.GetValues("X-Reject-Reason")));
        var retryAfter = rejected.Headers.RetryAfter?.Delta;
        Assert.NotNull(retryAfter);
        Assert.InRange(retryAfter.Value, TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(5));
        var stats = await TestServer.GetStatsAsync(client);
        Assert.Equal(1, stats.Rejected429RateLimit);
        Assert.Equal(0, stats.Rejected429Capacity);
        Assert.Equal(2, stats.RequestsServed);
    }

    [Fact]
    public async Task Stats_RateLimitExhausted_IsNotRateLimited()
    {
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions
        {
            RatePerSecond = 0.2,
            RateBurst = 1,
            Latency = new FixedLatency(0),
        });
        using var client = TestServer.ClientFor(server);
        Assert.Equal(HttpStatusCode.OK, await TestServer.GetItemStatusAsync(client, 1));
        Assert.Equal(HttpStatusCode.TooManyRequests, await TestServer.GetItemStatusAsync(client, 2));

        for (var i = 0; i < 3; i++)
        {
            Assert.Equal(1, (await TestServer.GetStatsAsync(client)).RequestsServed);
        }
    }
}
