using FanOut.Redis.FleetWorker;
using FanOut.Redis.FleetWorker.Soak;
using FanOut.Redis.Tests.Infrastructure;

using StackExchange.Redis;

using Xunit.Abstractions;

namespace FanOut.Redis.Tests.Failover;

/// <summary>
/// The limit through Redis Sentinel (a primary, a replica and three sentinels, started in temp folders on loopback): the
/// replica's acknowledgement (<see cref="RedisLimitOptions.ReplicaAcknowledgements"/>, <c>WAIT</c>) before a lease is used,
/// and worker processes through promotions with the soak's independent referee counting what runs.
/// </summary>
public sealed class FailoverTests(ITestOutputHelper output)
{
    private static readonly TimeSpan s_guard = TimeSpan.FromSeconds(120);

    [SentinelFact]
    public async Task ReplicaAcknowledgements_ReplicaHung_NoPermitUntilTheReplicaHoldsTheLease()
    {
        await using var group = await LocalSentinelGroup.StartAsync();
        await using var redis = await ConnectionMultiplexer.ConnectAsync(group.Configuration + ",abortConnect=false");
        var acknowledged = new RedisLimitOptions
        {
            Key = $"wait-{Guid.NewGuid():N}",
            Budget = 2,
            LeaseTime = TimeSpan.FromSeconds(3),
            PollInterval = TimeSpan.FromMilliseconds(50),
            ReplicaAcknowledgements = 1,
            ReplicaTimeout = TimeSpan.FromMilliseconds(200),
        };
        var unacknowledged = acknowledged with { Key = $"nowait-{Guid.NewGuid():N}", ReplicaAcknowledgements = 0 };
        var database = redis.GetDatabase();
        foreach (var key in new[] { acknowledged.Key, unacknowledged.Key })
        {
            // Fresh servers: say no lease of an earlier life exists, so the first client waits out no restart grace.
            await KeyEpoch.SetAsync(database, key);
        }

        await using var waiting = RedisConcurrencyLimit.Create(redis, acknowledged);
        await using var plain = RedisConcurrencyLimit.Create(redis, unacknowledged);
        var replica = await group.ReplicaAsync();
        replica.Suspend();
        try
        {
            // Without WAIT the primary's grant is used at once, though the replica holds none of it.
            Assert.True(await plain.WaitAsync(CancellationToken.None).WaitAsync(s_guard));
            plain.Release();

            var refused = await Assert.ThrowsAsync<RedisLimitUnavailableException>(() => waiting.WaitAsync(CancellationToken.None).WaitAsync(s_guard));
            Assert.Contains("WAIT", refused.InnerException?.Message ?? string.Empty, StringComparison.Ordinal);
            Assert.Equal(0, waiting.InFlight);
        }
        finally
        {
            replica.Resume();
        }

        // Acknowledged again: the next acquisition gets its permit, and the grant given up on was released.
        var granted = false;
        for (var attempt = 0; !granted && attempt < 100; attempt++)
        {
            try
            {
                granted = await waiting.WaitAsync(CancellationToken.None).WaitAsync(s_guard);
            }
            catch (RedisLimitUnavailableException)
            {
                await Task.Delay(100); // the replica catching up, or the known failure until the next poll
            }
        }

        Assert.True(granted);
        var leases = $"fanout:{{{acknowledged.Key}}}:leases";
        await Infrastructure.Eventually.TrueAsync(async () => await database.SortedSetLengthAsync(leases) == waiting.LeasesHeld, "the grant given up on is released");
        waiting.Release();
    }

    [SentinelFact]
    public async Task Soak_ThroughSentinelWithReplicaAcknowledgements_EveryFailoverKindOnce_NoViolations()
    {
        var options = new FleetSoakOptions
        {
            Sentinel = true,
            ReplicaAcknowledgements = 1,
            Kinds = [SoakFault.Failover, SoakFault.KillPrimary, SoakFault.Join], // the others are the one-server soak's
            Duration = TimeSpan.Zero, // until every kind was injected once
            Workers = 3,
            Budget = 7,
            LeaseTime = TimeSpan.FromSeconds(2),
            Gap = (TimeSpan.FromMilliseconds(200), TimeSpan.FromMilliseconds(400)),
        };

        var result = await SoakRuns.RunAsync(options, output, s_guard);

        SoakRuns.AssertEveryKindInjected(options, result);
        SoakRuns.AssertNoViolations(result);
    }
}
