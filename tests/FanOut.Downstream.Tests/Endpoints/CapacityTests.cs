using System.Diagnostics;
using System.Net;

using FanOut.Downstream.Latency;
using FanOut.Downstream.Stats;

namespace FanOut.Downstream.Tests.Endpoints;

/// <summary>Capacity N and queue Q, through real HTTP.</summary>
public class CapacityTests
{
    [Fact]
    public async Task Item_BurstOfManyConcurrentRequests_PeakConcurrencyIsExactlyCapacity()
    {
        const int Capacity = 4;
        const int Requests = 40;
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions
        {
            Capacity = Capacity,
            Queue = Requests,
            Latency = new FixedLatency(50),
        });
        using var client = TestServer.ClientFor(server);

        var (stats, elapsed) = await BurstAllOkAsync(client, Requests);
        Assert.Equal(Capacity, stats.PeakConcurrentServed);    // reached, and never above
        Assert.Equal(Requests, stats.RequestsServed);
        Assert.Equal(0, stats.Rejected429);
        Assert.Equal(0, stats.InFlight);

        // A lower bound, immune to a slow machine: 40 requests of 50 ms through 4 slots need 10 waves.
        Assert.True(elapsed >= TimeSpan.FromMilliseconds(Requests / Capacity * 50 * 0.95), $"Took only {elapsed.TotalMilliseconds} ms");
    }

    [Fact]
    public async Task Item_CapacityPlusQueueConcurrentRequests_AllServedQueuedOnesWaitLonger()
    {
        const int Capacity = 2;
        const int Queue = 4;
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions
        {
            Capacity = Capacity,
            Queue = Queue,
            Latency = new FixedLatency(100),
        });
        using var client = TestServer.ClientFor(server);

        var (stats, elapsed) = await BurstAllOkAsync(client, Capacity + Queue);
        Assert.Equal(0, stats.Rejected429);
        Assert.Equal(Capacity + Queue, stats.RequestsServed);
        Assert.Equal(Capacity, stats.PeakConcurrentServed);

        // 6 requests x 100 ms through 2 slots need at least 3 waves, however they arrive.
        Assert.True(elapsed >= TimeSpan.FromMilliseconds(300 * 0.95), $"Took only {elapsed.TotalMilliseconds} ms");
    }

    [Fact]
    public async Task Item_BeyondCapacityPlusQueue_ExactlyTheExtraRequestsGetImmediate429()
    {
        // Deterministic: the N + Q requests sleep 30 s, so nothing frees a slot while the extra k arrive;
        // we wait (via /stats) until they hold every slot and queue place before sending the k.
        const int Capacity = 2;
        const int Queue = 3;
        const int Extra = 3;
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions
        {
            Capacity = Capacity,
            Queue = Queue,
            Latency = new FixedLatency(30_000),
        });
        using var client = TestServer.ClientFor(server);
        using var holders = new CancellationTokenSource();
        var held = Enumerable.Range(0, Capacity + Queue)
            .Select(id => TestServer.GetItemStatusAsync(client, id, holders.Token))
            .ToList();
        var full = await TestServer.WaitForStatsAsync(client, s => s.InFlight == Capacity && s.Queued == Queue);
        Assert.Equal(Capacity + Queue, full.PeakAtGate); // every slot and queue place, nobody turned away yet

        for (var i = 0; i < Extra; i++)
        {
            using var response = await client.GetAsync(new Uri($"item/x{i}", UriKind.Relative));
            Assert.Equal(HttpStatusCode.TooManyRequests, response.StatusCode);     // answered now, not after 30 s
            Assert.Equal("capacity", Assert.Single(response.Headers.GetValues("X-Reject-Reason")));
            Assert.Null(response.Headers.RetryAfter);
        }

        var stats = await TestServer.GetStatsAsync(client);
        Assert.Equal(Extra, stats.Rejected429Capacity);
        Assert.Equal(Extra, stats.Rejected429);
        Assert.Equal(0, stats.Rejected429RateLimit);
        Assert.Equal(Capacity + Queue + 1, stats.PeakAtGate); // one turned away at a time, each above capacity + queue
        server.ResetStats();
        Assert.Equal(Capacity + Queue, (await TestServer.GetStatsAsync(client)).PeakAtGate); // restarts from those held

        // Cancelling the holders must reach the server: slots and queue places come back.
        await holders.CancelAsync();
        foreach (var request in held)
        {
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => request);
        }

        var after = await TestServer.WaitForStatsAsync(client, s => s.InFlight == 0 && s.Queued == 0 && s.RequestsCancelled == Capacity + Queue);
        Assert.Equal(0, after.RequestsServed);
        server.ResetStats();
        Assert.Equal(0, (await TestServer.GetStatsAsync(client)).PeakAtGate); // every place given back
    }

    [Fact]
    public async Task Item_NoQueue_RejectsAsSoonAsSlotsAreTaken()
    {
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions
        {
            Capacity = 1,
            Queue = 0,
            Latency = new FixedLatency(30_000),
        });
        using var client = TestServer.ClientFor(server);
        using var holder = new CancellationTokenSource();
        var held = TestServer.GetItemStatusAsync(client, 1, holder.Token);
        await TestServer.WaitForStatsAsync(client, s => s.InFlight == 1);

        Assert.Equal(HttpStatusCode.TooManyRequests, await TestServer.GetItemStatusAsync(client, 2));

        await holder.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => held);
    }

    /// <summary>Sends <paramref name="requests"/> requests at once, asserts every one is answered 200, and returns the server's stats after and how long the burst took.</summary>
    private static async Task<(DownstreamStats Stats, TimeSpan Elapsed)> BurstAllOkAsync(HttpClient client, int requests)
    {
        var started = Stopwatch.GetTimestamp();
        var statuses = await Task.WhenAll(Enumerable.Range(0, requests).Select(id => TestServer.GetItemStatusAsync(client, id)));
        var elapsed = Stopwatch.GetElapsedTime(started);

        Assert.All(statuses, status => Assert.Equal(HttpStatusCode.OK, status));
        return (await TestServer.GetStatsAsync(client), elapsed);
    }
}
