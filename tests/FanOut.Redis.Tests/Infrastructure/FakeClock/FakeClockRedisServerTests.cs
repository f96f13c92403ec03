using StackExchange.Redis;

namespace FanOut.Redis.Tests.Infrastructure.FakeClock;

/// <summary>The fake-clock redis-server does what the fleet simulation relies on: it answers, runs scripts, and its time is the test's.</summary>
public sealed class FakeClockRedisServerTests
{
    private static readonly DateTimeOffset s_start = new(2030, 1, 1, 0, 0, 0, 250, TimeSpan.Zero);

    [FakeClockFact]
    public async Task Time_IsFrozenUntilSetAndExpiriesFollowIt()
    {
        await using var server = await FakeClockRedisServer.StartAsync(s_start);
        await using var connection = await ConnectionMultiplexer.ConnectAsync(server.Endpoint);
        var db = connection.GetDatabase();

        await db.PingAsync();
        var first = await Time(db);
        await Task.Delay(50);
        Assert.Equal(s_start, first);
        Assert.Equal(s_start, await Time(db)); // frozen: real time passed, the server's did not

        await db.StringSetAsync("k", "v", TimeSpan.FromMilliseconds(1000));
        server.SetTime(s_start.AddMilliseconds(999.5));
        Assert.Equal(s_start.AddMilliseconds(999.5), await Time(db));
        Assert.Equal("v", (string?)await db.StringGetAsync("k"));
        server.SetTime(s_start.AddMilliseconds(1001)); // Redis expires a key once its millisecond clock is past the deadline
        Assert.False((await db.StringGetAsync("k")).HasValue); // the expiry read the server's (fake) clock
    }

    [FakeClockFact]
    public async Task RedisConcurrencyLimit_OnTheFakeClock_LeasesAndReleases()
    {
        await using var server = await FakeClockRedisServer.StartAsync(s_start);
        await using var connection = await ConnectionMultiplexer.ConnectAsync(server.Endpoint);
        var key = $"fake-clock-{Guid.NewGuid():N}";
        await KeyEpoch.SetAsync(connection.GetDatabase(), key);
        await using var limit = RedisConcurrencyLimit.Create(connection, new RedisLimitOptions { Key = key, Budget = 2 });

        Assert.True(await limit.WaitAsync(CancellationToken.None).WaitAsync(TimeSpan.FromSeconds(30)));
        Assert.True(await limit.WaitAsync(CancellationToken.None).WaitAsync(TimeSpan.FromSeconds(30)));
        Assert.Equal(2, limit.FleetInUse); // the lease script ran and counted both
        limit.Release();
        limit.Release();
    }

    private static async Task<DateTimeOffset> Time(IDatabase db)
    {
        var time = (RedisResult[])(await db.ExecuteAsync("TIME"))!;
        return DateTimeOffset.FromUnixTimeSeconds((long)time[0]).AddTicks((long)time[1] * 10);
    }
}
