using System.Net;
using System.Text.Json;

using FanOut.Downstream.Latency;
using FanOut.Downstream.Stats;

namespace FanOut.Downstream.Tests.Endpoints;

public class StatsTests
{
    [Fact]
    public async Task Stats_Json_HasTheDocumentedCamelCaseFields()
    {
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions { Capacity = 3, Latency = new FixedLatency(1) });
        using var client = TestServer.ClientFor(server);
        await TestServer.GetItemStatusAsync(client, 1);

        using var document = JsonDocument.Parse(await client.GetStringAsync(new Uri("stats", UriKind.Relative)));
        var root = document.RootElement;

        Assert.Equal(1, root.GetProperty("requestsServed").GetInt64());
        Assert.Equal(1, root.GetProperty("peakConcurrentServed").GetInt32());
        Assert.Equal(3, root.GetProperty("capacity").GetInt32());
        foreach (var name in new[] { "requestsCancelled", "rejected429", "rejected429Capacity", "rejected429RateLimit", "rejectedNotLoopback", "inFlight", "queued", "latencyP50Ms", "latencyP95Ms", "latencyP99Ms", "latencyMaxMs" })
        {
            Assert.True(root.TryGetProperty(name, out _), $"/stats lacks {name}");
        }

        Assert.True(root.GetProperty("latencyP99Ms").GetDouble() >= 1);
    }

    [Fact]
    public async Task ResetStats_AfterTraffic_ZeroesCountersAndCountsAfresh()
    {
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions { Capacity = 1, Queue = 0, Latency = new FixedLatency(2) });
        using var client = TestServer.ClientFor(server);
        for (var i = 0; i < 3; i++)
        {
            Assert.Equal(HttpStatusCode.OK, await TestServer.GetItemStatusAsync(client, i));
        }

        var before = await TestServer.GetStatsAsync(client);
        Assert.Equal(3, before.RequestsServed);
        Assert.True(before.LatencyP50Ms > 0);

        using (var reset = await client.PostAsync(new Uri("stats/reset", UriKind.Relative), content: null))
        {
            Assert.Equal(HttpStatusCode.NoContent, reset.StatusCode);
        }

        var zeroed = await TestServer.GetStatsAsync(client);
        Assert.Equal(new DownstreamStats { Capacity = 1, QueueLimit = 0, Latency = "fixed:2", Phase = DownstreamServer.StartPhase }, zeroed);

        await TestServer.GetItemStatusAsync(client, 9);
        Assert.Equal(1, (await TestServer.GetStatsAsync(client)).RequestsServed);

        server.ResetStats();     // the in-process twin of POST /stats/reset
        Assert.Equal(0, server.GetStats().RequestsServed);
    }

    [Fact]
    public async Task Stats_ManyConcurrentRequests_CountsEveryOneExactly()
    {
        // No lost updates: every request ends as served or 429, and the two add up.
        const int Requests = 200;
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions { Capacity = 8, Queue = 40, Latency = new FixedLatency(1) });
        using var client = TestServer.ClientFor(server);

        var statuses = await Task.WhenAll(Enumerable.Range(0, Requests).Select(id => TestServer.GetItemStatusAsync(client, id)));

        var stats = server.GetStats();
        Assert.Equal(statuses.Count(s => s == HttpStatusCode.OK), stats.RequestsServed);
        Assert.Equal(statuses.Count(s => s == HttpStatusCode.TooManyRequests), stats.Rejected429Capacity);
        Assert.Equal(Requests, stats.RequestsServed + stats.Rejected429);
        Assert.InRange(stats.PeakConcurrentServed, 1, 8);
    }
}
