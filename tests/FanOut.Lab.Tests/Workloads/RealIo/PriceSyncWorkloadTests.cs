using FanOut.Downstream;
using FanOut.Downstream.Endpoints;
using FanOut.Downstream.Latency;
using FanOut.Lab.Strategies;
using FanOut.Lab.Workloads.RealIo;

namespace FanOut.Lab.Tests.Workloads.RealIo;

public sealed class PriceSyncWorkloadTests
{
    [Fact]
    public async Task RunAsync_EveryProduct_WritesTheServersPriceAndDisposeDeletesTheDatabase()
    {
        const int products = 120;
        var workload = new PriceSyncWorkload(new DownstreamOptions { Capacity = 32, Queue = 200, Latency = new FixedLatency(1) }, TimeSpan.FromSeconds(10), products);
        string database;
        try
        {
            await workload.SetUpAsync(CancellationToken.None);
            database = workload.DatabasePath;
            Assert.True(File.Exists(database));
            workload.RunStarting();
            Assert.All(workload.ReadPrices().Values, Assert.Null);

            await new ParallelForEachAsyncStrategy(16).RunAsync(workload, Enumerable.Range(0, products).ToArray(), CancellationToken.None).WaitAsync(TimeSpan.FromSeconds(20));
            var io = workload.RunFinished(100);

            Assert.Equal(products, io.Successes);
            Assert.Equal(0, io.Failures);
            Assert.Equal(products, io.RequestsServed);
            Assert.True(io.WriteWaitMs > 0);
            var prices = workload.ReadPrices();
            Assert.Equal(products, prices.Count);
            Assert.All(prices, p => Assert.Equal(PriceCatalog.PriceOf(p.Key.ToString(System.Globalization.CultureInfo.InvariantCulture)), p.Value));
        }
        finally
        {
            await workload.DisposeAsync();
        }

        Assert.False(File.Exists(database));
        Assert.False(Directory.Exists(Path.GetDirectoryName(database)));
    }

    [Fact]
    public async Task RunAsync_ServerRejects_CountsTheFailureAndWritesNothingForIt()
    {
        // Capacity 1, no queue, 200 ms: of 10 calls at once exactly one is served.
        await using var workload = new PriceSyncWorkload(new DownstreamOptions { Capacity = 1, Queue = 0, Latency = new FixedLatency(200) }, TimeSpan.FromSeconds(10), 10);
        await workload.SetUpAsync(CancellationToken.None);
        workload.RunStarting();
        await new WhenAllStrategy().RunAsync(workload, Enumerable.Range(0, 10).ToArray(), CancellationToken.None).WaitAsync(TimeSpan.FromSeconds(20));
        var io = workload.RunFinished(100);
        Assert.Equal(1, io.Successes);
        Assert.Equal(9, io.FailuresByStatus[429]);
        Assert.Equal(1, workload.ReadPrices().Values.Count(p => p is not null));
    }
}
