using FanOut.Redis.Tests.Infrastructure;

namespace FanOut.Redis.Tests.Faults;

/// <summary>
/// <see cref="RedisUnavailablePolicy.FallBackToLocal"/> during an outage: each process falls back to the share it held when
/// Redis last answered, so the fleet admits about its budget, not processes x <see cref="RedisLimitOptions.FallbackLimit"/>.
/// Each limit is a process of the fleet (its own connection), against a real redis-server that is killed.
/// </summary>
public sealed class FallbackShareTests(RedisServer redis) : IClassFixture<RedisServer>
{
    private static readonly TimeSpan s_guard = TimeSpan.FromSeconds(30);

    [Theory]
    [InlineData(true, 8)] // the share: ceil(8 / 4) = 2 each
    [InlineData(false, 32)] // the old rule, still there as an option: the fallback limit each
    public async Task WaitAsync_FourProcessesOnABudgetOf8LoseRedis_FleetAdmitsTheirShares(bool atLastShare, int fleetBound)
    {
        const int Budget = 8;
        const int Processes = 4;
        var options = new RedisLimitOptions
        {
            Key = $"fallback-{Guid.NewGuid():N}",
            Budget = Budget,
            BatchSize = 1,
            LeaseTime = TimeSpan.FromSeconds(1),
            PollInterval = TimeSpan.FromMilliseconds(50),
            WhenUnavailable = RedisUnavailablePolicy.FallBackToLocal,
            FallbackLimit = Budget,
            FallbackAtLastShare = atLastShare,
        };
        await Eventually.TrueAsync(() => Task.FromResult(redis.Connection.IsConnected), "the shared connection is back after the other case's outage", s_guard);
        await KeyEpoch.SetAsync(redis.Connection.GetDatabase(), options.Key, "earlier"); // no restart grace: the key was used before
        var connections = new List<StackExchange.Redis.ConnectionMultiplexer>();
        var limits = new List<RedisConcurrencyLimit>();
        var waits = new List<Task<bool>>();
        try
        {
            for (var i = 0; i < Processes; i++)
            {
                connections.Add(await redis.Connect());
                limits.Add(RedisConcurrencyLimit.Create(connections[i], options));
                Assert.True(await limits[i].WaitAsync().WaitAsync(s_guard)); // one item running in each
            }

            // Each renewal answers how many processes share the budget: 4, a share of 2.
            await Eventually.TrueAsync(() => Task.FromResult(limits.All(limit => limit.FallbackLimitNow == (atLastShare ? 2 : Budget))), "every process learned the fleet's size", s_guard);

            redis.Kill();
            foreach (var limit in limits)
            {
                for (var i = 0; i < Budget; i++)
                {
                    waits.Add(limit.WaitAsync());
                }
            }

            // The first failed round serves each process's waiters from the fallback, all it will, at once.
            var share = fleetBound / Processes;
            await Eventually.TrueAsync(() => Task.FromResult(limits.All(limit => limit.InFlight >= share)), "every process ran on its fallback", s_guard);
            var admitted = limits.Sum(limit => limit.InFlight);
            Assert.Equal(fleetBound, admitted);
            Assert.All(limits, limit => Assert.Equal(share, limit.InFlight));
        }
        finally
        {
            foreach (var limit in limits)
            {
                await limit.DisposeAsync();
            }

            await Task.WhenAll(waits).ContinueWith(static t => _ = t.Exception, TaskScheduler.Default); // the waiters left are failed by the disposal
            foreach (var connection in connections)
            {
                await connection.DisposeAsync();
            }

            await redis.StartAgainAsync();
        }
    }
}
