using System.Net;

using FanOut.Downstream.Control;
using FanOut.Downstream.Latency;

using Microsoft.Extensions.Time.Testing;

namespace FanOut.Downstream.Tests.Control;

/// <summary>Changes to a running server: <see cref="DownstreamServer.Apply"/> and <c>PUT /control</c>, through real HTTP.</summary>
public class ControlTests
{
    [Fact]
    public async Task Apply_CapacityDroppedUnderInFlightRequests_FinishesThemAndTurnsAwayNewOnes()
    {
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions { Capacity = 4, Queue = 0, Latency = new FixedLatency(60_000) });
        using var client = TestServer.ClientFor(server);
        using var held = new CancellationTokenSource();
        var holding = Enumerable.Range(0, 4).Select(i => TestServer.GetItemStatusAsync(client, i, held.Token)).ToArray();
        await TestServer.WaitForStatsAsync(client, s => s.InFlight == 4);

        server.Apply(new DownstreamChange { Capacity = 2, Phase = "halved" });

        Assert.Equal(HttpStatusCode.TooManyRequests, await TestServer.GetItemStatusAsync(client, 99));
        var stats = await TestServer.GetStatsAsync(client);
        Assert.Equal(4, stats.InFlight);               // nothing in flight was cut off
        Assert.Equal(0, stats.RequestsCancelled);
        Assert.Equal(2, stats.Capacity);
        Assert.Equal("halved", stats.Phase);
        Assert.Equal(1, stats.Rejected429Capacity);

        await held.CancelAsync();
        await Task.WhenAll(holding.Select(t => t.ContinueWith(_ => { }, TaskScheduler.Default)));
    }

    [Fact]
    public async Task Apply_CapacityRaisedAboveTheStartingOne_ServesMoreAtOnce()
    {
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions { Capacity = 1, Queue = 4, Latency = new FixedLatency(60_000) });
        using var client = TestServer.ClientFor(server);
        using var held = new CancellationTokenSource();
        var holding = Enumerable.Range(0, 3).Select(i => TestServer.GetItemStatusAsync(client, i, held.Token)).ToArray();
        await TestServer.WaitForStatsAsync(client, s => s.InFlight == 1 && s.Queued == 2);

        server.Apply(new DownstreamChange { Capacity = 3 });

        var stats = await TestServer.WaitForStatsAsync(client, s => s.InFlight == 3);
        Assert.Equal(0, stats.Queued);
        Assert.Equal(3, stats.PeakConcurrentServed);

        await held.CancelAsync();
        await Task.WhenAll(holding.Select(t => t.ContinueWith(_ => { }, TaskScheduler.Default)));
    }

    [Fact]
    public async Task Apply_Latency_NextRequestsWorkTheNewTime()
    {
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions { Latency = new FixedLatency(1) });
        using var client = TestServer.ClientFor(server);

        server.Apply(new DownstreamChange { Latency = LatencySpec.Parse("fixed:7.5") });

        var item = await TestServer.GetJsonAsync<FanOut.Downstream.Endpoints.ItemResponse>(client, "item/1");
        Assert.Equal(7.5, item!.WorkMs);
        Assert.Equal("fixed:7.5", (await TestServer.GetStatsAsync(client)).Latency);
    }

    [Fact]
    public async Task Apply_RetryAfterStorm_Answers429WithTheSecondsLeftUntilItEnds()
    {
        var time = new FakeTimeProvider();
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions { Latency = new FixedLatency(0), TimeProvider = time });
        using var client = TestServer.ClientFor(server);

        server.Apply(new DownstreamChange { RetryAfterStorm = TimeSpan.FromSeconds(2) });

        using (var response = await client.GetAsync(new Uri("item/1", UriKind.Relative)))
        {
            Assert.Equal(HttpStatusCode.TooManyRequests, response.StatusCode);
            Assert.Equal(TimeSpan.FromSeconds(2), response.Headers.RetryAfter?.Delta);
            Assert.Equal("storm", response.Headers.GetValues("X-Reject-Reason").Single());
        }

        time.Advance(TimeSpan.FromSeconds(1.5));
        using (var response = await client.GetAsync(new Uri("item/2", UriKind.Relative)))
        {
            Assert.Equal(HttpStatusCode.TooManyRequests, response.StatusCode);
            Assert.Equal(TimeSpan.FromSeconds(1), response.Headers.RetryAfter?.Delta);   // 0.5 s left, rounded up
        }

        Assert.Equal(0.5, (await TestServer.GetStatsAsync(client)).StormSecondsLeft);
        time.Advance(TimeSpan.FromSeconds(0.5));
        Assert.Equal(HttpStatusCode.OK, await TestServer.GetItemStatusAsync(client, 3));
        var stats = await TestServer.GetStatsAsync(client);
        Assert.Equal(2, stats.Rejected429Storm);
        Assert.Equal(2, stats.Rejected429);
        Assert.Equal(1, stats.RequestsServed);
    }

    [Fact]
    public async Task PutControl_ValidSettings_AppliesThemAndAnswersTheStats()
    {
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions { Capacity = 8, Queue = 8 });
        using var client = TestServer.ClientFor(server);

        using var response = await client.PutAsync(new Uri("control?capacity=3&queue=0&latency=lognormal:20,p99=80&phase=degraded", UriKind.Relative), null);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        var stats = FanOut.Downstream.Stats.DownstreamStats.FromJson(await response.Content.ReadAsStringAsync());
        Assert.Equal((3, 0, "lognormal:20,p99=80", "degraded"), (stats.Capacity, stats.QueueLimit, stats.Latency, stats.Phase));
        Assert.Equal(3, server.CurrentCapacity);
        Assert.Equal("degraded", server.CurrentPhase);
    }

    [Theory]
    [InlineData("capacity=0", "capacity must be in [1, 10000]; got 0.")]
    [InlineData("capacity=many", "capacity must be a whole number in [1, 10000]; got 'many'.")]
    [InlineData("queue=-1", "queue must be in [0, 100000]; got -1.")]
    [InlineData("storm=forever", "storm must be a number of seconds in [0, 3600]; got 'forever'.")]
    [InlineData("speed=2", "unknown setting 'speed': valid settings are " + DownstreamChange.ValidSettings + ".")]
    [InlineData("phase=a%20b", "phase must be 1-64 letters, digits, '-', '_' or '.'; got 'a b'.")]
    [InlineData("", "no setting given: valid settings are " + DownstreamChange.ValidSettings + ".")]
    public async Task PutControl_BadSetting_Answers400WithOneLineAndChangesNothing(string query, string expected)
    {
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions { Capacity = 8 });
        using var client = TestServer.ClientFor(server);

        using var response = await client.PutAsync(new Uri(query.Length == 0 ? "control" : $"control?capacity=5&{query}", UriKind.Relative), null);

        Assert.Equal(HttpStatusCode.BadRequest, response.StatusCode);
        Assert.Equal(expected + "\n", await response.Content.ReadAsStringAsync());
        Assert.Equal(8, server.CurrentCapacity);        // the valid capacity=5 before it was not applied either
    }

    [Fact]
    public async Task PutControl_BadLatency_NamesTheSpecAndTheValidForms()
    {
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions());
        using var client = TestServer.ClientFor(server);

        using var response = await client.PutAsync(new Uri("control?latency=uniform:50-10", UriKind.Relative), null);

        var line = await response.Content.ReadAsStringAsync();
        Assert.Equal(HttpStatusCode.BadRequest, response.StatusCode);
        Assert.StartsWith("latency: Invalid latency spec 'uniform:50-10'", line, StringComparison.Ordinal);
        Assert.Contains(LatencySpec.ValidForms, line, StringComparison.Ordinal);
        Assert.Single(line.TrimEnd('\n').Split('\n'));
    }

    [Fact]
    public void Apply_OutOfRange_ThrowsNamingTheValueAndChangesNothing()
    {
        var change = new DownstreamChange { Capacity = 10_001 };

        var error = Assert.Throws<ArgumentOutOfRangeException>(change.Validate);

        Assert.StartsWith("capacity must be in [1, 10000]; got 10001.", error.Message, StringComparison.Ordinal);
    }
}
