using FanOut.Lab.Results;
using FanOut.Lab.Running;
using FanOut.Lab.Scenarios;

namespace FanOut.Lab.Tests.Scenarios;

/// <summary>Every real-I/O scenario runs end to end in this process at a tiny scale, one run per case, and reports what the downstream saw.</summary>
public sealed class RealIoScenarioTests
{
    private static readonly RunPolicy s_once = new(0, 1, 1, TimeSpan.Zero);
    private static readonly ScenarioSize s_tiny = new(0.05);

    private static async Task<ScenarioResult> RunAsync(string id, ScenarioSize? size = null)
    {
        var scenario = ScenarioCatalog.Default.Select(id, out var error) ?? throw new InvalidOperationException(error);
        using var limit = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        var results = await new LabRunner(new InProcessScenarioCaseRunner(s_once), null, new SilentProgress()).RunAsync(scenario, size ?? s_tiny, limit.Token);
        var result = Assert.Single(results.Scenarios);
        Assert.All(result.Cases, c => Assert.True(c.Succeeded, c.Error));
        Assert.All(result.Cases, c => Assert.NotNull(c.Io));
        return result;
    }

    [Fact]
    public async Task DownstreamCapacity_TinyScale_UnboundedCollects429sAndBoundedOnesDoNot()
    {
        // Scale 0.25 (median 5 ms), not the tiny scale's 1 ms: at 1 ms the first calls finish before the 256th connection
        // is open, so on a loaded machine the server never holds capacity + queue at once and no 429 is due.
        var result = await RunAsync("downstream-capacity", new ScenarioSize(0.25));
        var whenAll = result.Cases.Single(c => c.Strategy == "Task.WhenAll");
        var dop50 = result.Cases.Single(c => c.Strategy == "Parallel.ForEachAsync (DOP 50)");
        var byDefault = result.Cases.Single(c => c.Strategy == "Parallel.ForEachAsync (default)");
        var items = (int)whenAll.ItemsStarted;

        // The server owes 429s only when 128 calls reach it at once; a starved client (two busy loops on both cores) opens its
        // 500 connections too slowly for that, and then nothing may be turned away and the verdict must say so.
        const int capacity = DownstreamCapacityScenario.Capacity;
        var overwhelmed = whenAll.Io!.PeakAtGate > capacity + DownstreamCapacityScenario.Queue;
        Assert.True(overwhelmed == whenAll.Io.Rejected429 > 0, $"429s {whenAll.Io.Rejected429} with {whenAll.Io.PeakAtGate} at the server's slots and queue at once (capacity {capacity} + queue {DownstreamCapacityScenario.Queue})");
        Assert.Equal(whenAll.Io.Rejected429, whenAll.Io.FailuresByStatus.GetValueOrDefault("429"));
        Assert.Contains(overwhelmed ? "turned calls away" : "so it turned none away", result.Verdict, StringComparison.Ordinal);
        Assert.Equal(items, whenAll.Io.Successes + whenAll.Io.Failures);
        Assert.InRange(dop50.Io!.PeakAtGate!.Value, 1, 50);
        Assert.Equal(0, dop50.Io!.Failures);
        Assert.Equal(items, dop50.Io.Successes);
        Assert.InRange(dop50.Io.PeakConcurrentServed!.Value, 1, 50);
        Assert.InRange(whenAll.Io.PeakConcurrentServed!.Value, 1, capacity);
        if (whenAll.Io.PeakAtGate > capacity)
        {
            Assert.Equal(capacity, whenAll.Io.PeakConcurrentServed); // a call waited: every slot was taken
        }
        Assert.InRange(byDefault.Io!.PeakConcurrentServed!.Value, 1, Environment.ProcessorCount);
        Assert.StartsWith("Agrees", result.Verdict, StringComparison.Ordinal);
        Assert.Contains("ok/s", result.Verdict, StringComparison.Ordinal);
    }

    [Fact]
    public async Task DownstreamFleet_QuarterScale_TheSharedRedisLimitKeepsTheServerWithinTheBudget()
    {
        // Four worker processes and a private redis-server (installed by .ci/run); 5 ms median latency, as above.
        var result = await RunAsync("downstream-fleet", new ScenarioSize(0.25));
        var shared = result.Cases.Single(c => c.Strategy == "FanOut, shared Redis(48) per fleet");
        var local = result.Cases.Single(c => c.Strategy == "FanOut, Fixed(48) per process");

        Assert.InRange(shared.Io!.PeakConcurrentServed!.Value, 1, 48);
        Assert.Equal(0, shared.Io.Rejected429);
        Assert.Equal(1024, shared.Io.Successes);
        Assert.Equal(1024, local.Io!.Successes + local.Io.Failures);
        Assert.NotNull(shared.Io.RoundTripsPerItem);
        Assert.Null(local.Io.RoundTripsPerItem);
        Assert.Contains("(within the budget)", result.Verdict, StringComparison.Ordinal);
    }

    [Fact]
    public async Task DownstreamRateLimit_TinyScale_TheServerRateLimitsTheBurstyStrategies()
    {
        var result = await RunAsync("downstream-rate-limit");
        var whenAll = result.Cases.Single(c => c.Strategy == "Task.WhenAll");
        Assert.True(whenAll.Io!.Rejected429 > 0);
        // Every item tried once, except FanOut's default whose 429s are run again: there every item ends ok.
        var retrying = $"FanOut (default, 429 thrown)";
        Assert.All(result.Cases.Where(c => c.Strategy != retrying), c => Assert.Equal(256, c.Io!.Successes + c.Io.Failures));
        Assert.Equal(256, result.Cases.Single(c => c.Strategy == retrying).Io!.Successes);
        Assert.All(result.Cases, c => Assert.Equal(c.Io!.Rejected429, c.Io.FailuresHttp));
        Assert.Contains(result.Cases, c => c.Strategy == "Parallel.ForEachAsync (DOP 10)");
        Assert.Equal(256, result.Cases.Single(c => c.Strategy == "FanOut (Fixed 50, 500/s bucket)").Io!.Successes);
        Assert.Contains("not a rate limit", result.Verdict, StringComparison.Ordinal);
    }

    [Fact]
    public async Task DownstreamCrash_TinyScale_EveryCaseFinishesWithFailuresCountedByKind()
    {
        var result = await RunAsync("downstream-crash");
        Assert.All(result.Cases, c =>
        {
            Assert.Equal(256, c.Io!.Successes + c.Io.Failures);
            // At most the K requests before the crash succeed; an unbounded burst can lose even those, since the
            // crash aborts every request still in flight (WhenAll had all of them in flight: 0 succeeded in one run).
            Assert.InRange(c.Io.Successes, 0, 200);
            Assert.True(c.Io.FailuresSocket > 0, $"{c.Strategy}: {ResultTable.FailuresText(c.Io)}");
            Assert.Equal(0, c.Io.FailuresTimeout);
        });
        Assert.Contains(result.Cases, c => c.Io!.Successes > 0);
        Assert.StartsWith("Every strategy finished", result.Verdict, StringComparison.Ordinal);
    }

    [Fact]
    public async Task PriceSync_TinyScale_WritesEveryPriceAndMeasuresTheWriteWait()
    {
        var result = await RunAsync("price-sync");
        Assert.All(result.Cases, c =>
        {
            Assert.Equal(200, c.Io!.Successes);
            Assert.Equal(200, c.Io.RequestsServed);
            Assert.True(c.Io.WriteWaitMs > 0);
        });
        Assert.Contains("DB write wait", ResultTable.For(result).Headers);
        Assert.Contains("per write", result.Verdict, StringComparison.Ordinal);
    }

    [Fact]
    public async Task HashFiles_TinyScale_HashesEveryFileWithoutAServer()
    {
        var result = await RunAsync("hash-files");
        Assert.All(result.Cases, c =>
        {
            Assert.Equal(200, c.Io!.Successes);
            Assert.Null(c.Io.PeakConcurrentServed);
        });
        Assert.Equal(1, result.Cases.Single(c => c.Strategy == "Synchronous loop").PeakInFlight);
        Assert.StartsWith("Agrees", result.Verdict, StringComparison.Ordinal);
    }
}
