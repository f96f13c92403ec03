using FanOut.Downstream;
using FanOut.Downstream.Latency;
using FanOut.Lab.Strategies;
using FanOut.Lab.Workloads.RealIo;

namespace FanOut.Lab.Tests.Workloads.RealIo;

/// <summary>http-get against a real server on loopback: outcome counts must be exact, and a crashed server must not hang a run.</summary>
public sealed class HttpGetWorkloadTests
{
    /// <summary>Bounds every run in these tests; a hang fails the test instead of stalling the suite.</summary>
    private static readonly TimeSpan s_runLimit = TimeSpan.FromSeconds(20);

    [Fact]
    public async Task RunAsync_UnboundedAgainstSmallServer_Counts429sAndSuccessesExactly()
    {
        // 4 slots + 4 queue places, 2 s each: 40 calls at once, so exactly 8 are admitted and 32 turned away. The long
        // latency keeps every slot taken until the last of the 40 connections arrives, even on a loaded machine
        // (at 300 ms a slot freed first in one run, and a ninth call got in).
        var server = new DownstreamOptions { Capacity = 4, Queue = 4, Latency = new FixedLatency(2000) };
        await using var workload = new HttpGetWorkload(server, TimeSpan.FromSeconds(10), 40);
        await workload.SetUpAsync(CancellationToken.None);
        workload.RunStarting();

        await new WhenAllStrategy().RunAsync(workload, Enumerable.Range(0, 40).ToArray(), CancellationToken.None).WaitAsync(s_runLimit);
        var io = workload.RunFinished(4000);

        Assert.Equal(8, io.Successes);
        Assert.Equal(32, io.FailuresByStatus[429]);
        Assert.Equal(0, io.FailuresSocket + io.FailuresTimeout + io.FailuresOther);
        Assert.Equal(32, io.Rejected429);
        Assert.Equal(8, io.RequestsServed);
        Assert.Equal(4, io.PeakConcurrentServed);
        Assert.Equal(40, workload.Probe.Started);
        Assert.Equal(2, io.SuccessesPerSecond);
        Assert.InRange(io.LatencyP50Ms!.Value, 2000, 10_000);
    }

    [Fact]
    public async Task RunAsync_BoundedBelowCapacity_EverythingSucceedsAndTheServerResetsBetweenRuns()
    {
        var server = new DownstreamOptions { Capacity = 8, Queue = 0, Latency = new FixedLatency(2) };
        await using var workload = new HttpGetWorkload(server, TimeSpan.FromSeconds(10), 60);
        await workload.SetUpAsync(CancellationToken.None);
        for (var run = 0; run < 2; run++)
        {
            workload.RunStarting();
            await new ParallelForEachAsyncStrategy(4).RunAsync(workload, Enumerable.Range(0, 60).ToArray(), CancellationToken.None).WaitAsync(s_runLimit);
            var io = workload.RunFinished(100);
            Assert.Equal(60, io.Successes);
            Assert.Equal(0, io.Failures);
            Assert.Equal(60, io.RequestsServed);
            Assert.InRange(io.PeakConcurrentServed!.Value, 1, 4);
        }
    }

    [Fact]
    public async Task RunAsync_ServerCrashesAfterK_FinishesWithConnectionFailuresCounted()
    {
        var server = new DownstreamOptions { Capacity = 8, Queue = 8, Latency = new FixedLatency(5), CrashAfterRequests = 20 };
        await using var workload = new HttpGetWorkload(server, TimeSpan.FromSeconds(3), 100);
        await workload.SetUpAsync(CancellationToken.None);
        for (var run = 0; run < 2; run++)
        {
            // The second run proves a crashed server is replaced by a fresh one.
            workload.RunStarting();
            await new ParallelForEachAsyncStrategy(4).RunAsync(workload, Enumerable.Range(0, 100).ToArray(), CancellationToken.None).WaitAsync(s_runLimit);
            var io = workload.RunFinished(100);

            Assert.Equal(100, io.Successes + io.Failures);
            Assert.InRange(io.Successes, 1, 20);
            Assert.True(io.FailuresSocket >= 50, $"socket failures {io.FailuresSocket}, other {io.FailuresOther}, timeouts {io.FailuresTimeout}");
            Assert.Equal(0, io.FailuresTimeout);
            Assert.True(workload.Server.HasCrashed);
        }
    }

    [Fact]
    public async Task DisposeAsync_AfterSetUp_StopsTheServer()
    {
        var workload = new HttpGetWorkload(new DownstreamOptions { Latency = new FixedLatency(0) }, TimeSpan.FromSeconds(2), 1);
        await workload.SetUpAsync(CancellationToken.None);
        var address = workload.Server.BaseAddress;
        await workload.DisposeAsync();

        using var client = new HttpClient { Timeout = TimeSpan.FromSeconds(2) };
        await Assert.ThrowsAsync<HttpRequestException>(() => client.GetAsync(new Uri(address, "item/1")));
    }

    [Theory]
    [InlineData("timeout")]
    [InlineData("socket")]
    [InlineData("other")]
    public void Classify_Exception_NamesItsKind(string kind)
    {
        Exception ex = kind switch
        {
            "timeout" => new TaskCanceledException("t", new TimeoutException()),
            "socket" => new HttpRequestException("refused", new System.Net.Sockets.SocketException((int)System.Net.Sockets.SocketError.ConnectionRefused)),
            _ => new HttpRequestException("The response ended prematurely."),
        };
        Assert.Equal(kind, ItemOutcomes.Classify(ex));
    }

    [Fact]
    public async Task RunAsync_ThrowOnFailure_Counts429ThenThrowsItWithTheStatusCode()
    {
        // One slot, no queue, 2 s: the second of two concurrent calls is turned away at once.
        var server = new DownstreamOptions { Capacity = 1, Queue = 0, Latency = new FixedLatency(2000) };
        await using var workload = new HttpGetWorkload(server, TimeSpan.FromSeconds(10), 2) { ThrowOnFailure = true };
        await workload.SetUpAsync(CancellationToken.None);
        workload.RunStarting();

        var first = workload.RunAsync(0, CancellationToken.None).AsTask();
        await WaitForServedAsync(workload);
        var rejected = await Assert.ThrowsAsync<HttpRequestException>(() => workload.RunAsync(1, CancellationToken.None).AsTask().WaitAsync(s_runLimit));
        await first.WaitAsync(s_runLimit);
        var io = workload.RunFinished(2000);

        Assert.Equal(System.Net.HttpStatusCode.TooManyRequests, rejected.StatusCode);
        Assert.Equal(1, io.Successes);
        Assert.Equal(1, io.FailuresByStatus[429]);
        Assert.Equal(true, workload.Parameters["throwOnFailure"]);
    }

    /// <summary>Waits (bounded) until the server holds the first call, so the second one surely finds it full.</summary>
    private static async Task WaitForServedAsync(HttpGetWorkload workload)
    {
        for (var i = 0; i < 200 && workload.Server.GetStats().InFlight == 0; i++)
        {
            await Task.Delay(10);
        }
    }
}
