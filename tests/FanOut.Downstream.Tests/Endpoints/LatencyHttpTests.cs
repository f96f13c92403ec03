using System.Diagnostics;

using FanOut.Downstream.Endpoints;
using FanOut.Downstream.Latency;
using FanOut.Downstream.Tests.Latency;

namespace FanOut.Downstream.Tests.Endpoints;

/// <summary>
/// A handful of requests per distribution through real HTTP. The behaviour under test is latency,
/// so wall-clock bounds appear here. Lower bounds are exact: the server waits at least each sample
/// by the high-resolution clock, and both the client's and the server's stopwatches enclose that
/// wait. Upper bounds allow <see cref="Overhead"/> for loopback HTTP, scheduling on a busy 2-core
/// machine and the histogram's 1.6% rounding, and apply to medians (the first request also pays
/// for the connection and JIT).
/// </summary>
public class LatencyHttpTests
{
    private const double Overhead = 40;
    private const int Requests = 15;

    private static async Task<(List<ItemResponse> Items, List<double> ClientMs)> GetSequentiallyAsync(HttpClient client)
    {
        var items = new List<ItemResponse>();
        var clientMs = new List<double>();
        for (var i = 0; i < Requests; i++)
        {
            var started = Stopwatch.GetTimestamp();
            items.Add((await TestServer.GetJsonAsync<ItemResponse>(client, $"item/{i}"))!);
            clientMs.Add(Stopwatch.GetElapsedTime(started).TotalMilliseconds);
        }

        return (items, clientMs);
    }

    [Fact]
    public async Task Item_Fixed20_MedianWithinTolerance()
    {
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions { Latency = LatencySpec.Parse("fixed:20") });
        using var client = TestServer.ClientFor(server);

        var (items, clientMs) = await GetSequentiallyAsync(client);

        Assert.All(items, item => Assert.Equal(20, item.WorkMs));
        Assert.InRange(LatencySamplerTests.Percentile(clientMs, 50), 20, 20 + Overhead);
        var stats = await TestServer.GetStatsAsync(client);
        Assert.InRange(stats.LatencyP50Ms, 20, 20 + Overhead);
        Assert.True(stats.LatencyMaxMs >= 20, $"Max {stats.LatencyMaxMs} ms is below the fixed latency");
    }

    [Fact]
    public async Task Item_Uniform_EachRequestWaitsItsSample()
    {
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions { Latency = LatencySpec.Parse("uniform:10-50") });
        using var client = TestServer.ClientFor(server);

        var (items, clientMs) = await GetSequentiallyAsync(client);

        // Every request waits at least its own sample; the upper bound is on the median overhead
        // only, since the first request also pays for the connection and the client's JIT.
        for (var i = 0; i < items.Count; i++)
        {
            Assert.InRange(items[i].WorkMs, 10, 50);
            Assert.True(clientMs[i] >= items[i].WorkMs, $"Request {i} took {clientMs[i]} ms for a {items[i].WorkMs} ms sample");
        }

        var overheads = items.Select((item, i) => clientMs[i] - item.WorkMs);
        Assert.InRange(LatencySamplerTests.Percentile(overheads, 50), 0, Overhead);
    }

    [Fact]
    public async Task Item_LogNormal_ServesTheSeededSamplesAndTheirMedian()
    {
        var spec = LatencySpec.Parse("lognormal:20,p99=80");
        const int Seed = 5;
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions { Latency = spec, Seed = Seed });
        using var client = TestServer.ClientFor(server);
        var sampler = new LatencySampler(spec, Seed);
        var expected = Enumerable.Range(0, Requests).Select(_ => sampler.NextMilliseconds()).ToList();

        var (items, _) = await GetSequentiallyAsync(client);

        // Sequential requests draw the seeded sequence in order: reproducible through HTTP.
        Assert.Equal(expected, items.Select(item => item.WorkMs));
        var expectedMedian = LatencySamplerTests.Percentile(expected, 50);
        var stats = await TestServer.GetStatsAsync(client);
        Assert.InRange(stats.LatencyP50Ms, expectedMedian, expectedMedian + Overhead);
    }
}
