using FanOut.Downstream;
using FanOut.Downstream.Latency;

namespace FanOut.Samples.Tests;

/// <summary>samples/Crawler against three loopback sites of different sizes, each refusing with 429 beyond its capacity.</summary>
/// <remarks>
/// Serial: the 429s of a first contact depend on how fast the client reads the first "no". Beside the other test
/// assemblies and two busy loops the site of 16 refused 35 of 150 (the limit reached 50 before the 429s were read);
/// alone beside the same loops, 6 of 6 runs passed.
/// </remarks>
[Trait(FanOut.Lab.Tests.Probing.SerialTests.Category, FanOut.Lab.Tests.Probing.SerialTests.Serial)]
public sealed class CrawlerSampleTests
{
    [Fact]
    public async Task Crawler_ThreeSitesOfDifferentSizes_FetchesEveryPageFromEach_EachAtItsOwnLimit()
    {
        int[] capacities = [4, 16, 64];
        var sites = new List<DownstreamServer>();
        try
        {
            foreach (var capacity in capacities)
            {
                sites.Add(await DownstreamServer.StartAsync(new DownstreamOptions { Capacity = capacity, Queue = 0, Latency = new FixedLatency(10) }));
            }

            await using var crawler = SampleProcess.Start("Crawler", [.. sites.Select(s => s.BaseAddress.ToString()), "--pages", "150"]);

            Assert.Equal(0, await crawler.WaitForExitAsync());
            for (var i = 0; i < sites.Count; i++)
            {
                var line = Assert.Single(crawler.Output.Split('\n'), l => l.StartsWith($"{sites[i].BaseAddress.Authority}: ", StringComparison.Ordinal));
                Assert.Contains("fetched 150 of 150 pages", line, StringComparison.Ordinal);

                // Each site answered every page (re-sent after a 429 where one came), and was sent little beyond its capacity:
                // its limit held it, not the loop.
                var stats = sites[i].GetStats();
                Assert.Equal(150, stats.RequestsServed);
                Assert.True(stats.Rejected429 <= 0.2 * 150, $"site of capacity {capacities[i]}: {stats.Rejected429} refused\n{crawler.Output}");
            }
        }
        finally
        {
            foreach (var site in sites)
            {
                await site.DisposeAsync();
            }
        }
    }
}
