using FanOut.Redis.Tests.Infrastructure;

namespace FanOut.Redis.Tests.Faults;

/// <summary>A lease held here that could not be renewed for a lease time is no longer handed out: Redis may have given it away.</summary>
public sealed class StaleLeaseTests(RedisServer redis) : IClassFixture<RedisServer>
{
    private static readonly TimeSpan s_lease = TimeSpan.FromSeconds(1);

    [Fact]
    public async Task TryAcquire_RedisGoneForALeaseTime_HeldLeaseNotHandedOutUntilRenewed()
    {
        using var connection = await redis.Connect();
        await using var limit = RedisConcurrencyLimit.Create(connection, new RedisLimitOptions { Key = $"stale-{Guid.NewGuid():N}", Budget = 1, LeaseTime = s_lease });
        Assert.True(await limit.WaitAsync(CancellationToken.None).WaitAsync(TimeSpan.FromSeconds(20)));
        limit.Release();

        redis.Kill(); // data lost: once it is back, another process could take the budget this lease counted in
        var reusedAfterALeaseTime = false;
        var killedAt = DateTime.UtcNow;
        while (DateTime.UtcNow - killedAt < s_lease * 2)
        {
            // Taken and given back every few milliseconds, so the lease never lingers idle long enough to go back.
            var taken = limit.TryAcquire();
            if (taken)
            {
                reusedAfterALeaseTime |= DateTime.UtcNow - killedAt > s_lease * 1.5;
                limit.Release();
            }

            await Task.Delay(5);
        }

        Assert.False(reusedAfterALeaseTime); // before: the lease served items for as long as Redis was gone
        await redis.StartAgainAsync();
        var served = false;
        for (var attempt = 0; attempt < 200 && !served; attempt++)
        {
            try
            {
                served = await limit.WaitAsync(CancellationToken.None).WaitAsync(TimeSpan.FromSeconds(20)); // from Redis again
            }
            catch (RedisLimitUnavailableException)
            {
                await Task.Delay(50); // the connection is still coming back
            }
        }

        Assert.True(served);
        limit.Release();
    }
}
