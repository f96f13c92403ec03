using FanOut.Downstream;
using FanOut.Downstream.Latency;
using FanOut.Redis.FleetWorker;

namespace FanOut.Samples.Tests;

/// <summary>Two samples/FleetWorker processes sharing one Redis budget in front of a downstream that refuses beyond it.</summary>
public sealed class FleetWorkerSampleTests
{
    [RedisFact]
    public async Task FleetWorker_TwoWorkers_ShareOneBudget_TheDownstreamNeverSeesMore()
    {
        await using var redis = await LocalRedisServer.StartAsync();
        await using var downstream = await DownstreamServer.StartAsync(new DownstreamOptions { Capacity = 8, Queue = 0, Latency = new FixedLatency(20) });
        string[] Args(string name) => ["--redis", redis.Endpoint, "--downstream", downstream.BaseAddress.ToString(), "--name", name, "--items", "150", "--budget", "8"];

        await using var a = SampleProcess.Start("FleetWorker", Args("a"));
        await using var b = SampleProcess.Start("FleetWorker", Args("b"));

        Assert.Equal(0, await a.WaitForExitAsync());
        Assert.Equal(0, await b.WaitForExitAsync());
        Assert.Contains("worker a: 150 items done", a.Output, StringComparison.Ordinal);
        Assert.Contains("worker b: 150 items done", b.Output, StringComparison.Ordinal);

        // Two workers, each free to run 8: together they never passed the fleet's 8 (a 9th call is refused at once here).
        var stats = downstream.GetStats();
        Assert.Equal(300, stats.RequestsServed);
        Assert.Equal(0, stats.Rejected429);
        Assert.InRange(stats.PeakConcurrentServed, 1, 8);
    }
}
