using FanOut.Redis.Tests.Infrastructure;

using StackExchange.Redis;

namespace FanOut.Redis.Tests.Faults;

/// <summary>
/// A Redis restart that loses the data while a process joins: whoever creates the new epoch, nothing is granted beyond the
/// budget until the leases of the old one have expired or been re-registered, and a survivor never hands a lease Redis may
/// have lost to a new item. Each limit is a process of the fleet (its own connection), against a real redis-server.
/// </summary>
public sealed class RestartGraceTests(RedisServer redis) : IClassFixture<RedisServer>
{
    private static readonly TimeSpan s_guard = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task Restart_JoinerCreatesTheNewEpoch_GrantsNothingWhileTheSurvivorHoldsTheBudget()
    {
        const int Budget = 4;
        var options = Options() with { Budget = Budget };
        await using var survivorConnection = await redis.Connect();
        await using var survivor = RedisConcurrencyLimit.Create(survivorConnection, options);
        for (var i = 0; i < Budget; i++)
        {
            Assert.True(await survivor.WaitAsync().WaitAsync(s_guard));
        }

        var survivorIds = (await Members(options)).ToHashSet();
        Assert.Equal(Budget, survivorIds.Count);
        await RestartLosingTheData(survivorConnection);

        // The joiner's first script reaches the fresh server before the survivor's next renewal: it creates the new epoch.
        await using var joinerConnection = await redis.Connect();
        await using var joiner = RedisConcurrencyLimit.Create(joinerConnection, options);
        var joined = joiner.WaitAsync();

        await Eventually.TrueAsync(
            async () => joined.IsCompleted || (await Members(options)).Count(survivorIds.Contains) == Budget,
            "the survivor re-registered its leases, or the joiner got a permit",
            s_guard);
        Assert.False(joined.IsCompleted, "The joiner got a permit while the survivor's four items ran: the fleet was above its budget.");
        Assert.Equal(Budget, survivor.LeasesHeld);
        Assert.Equal(Budget, await Count(options));

        // The survivor's items end; the joiner then gets a permit (once the grace is over), and Redis never held more than the budget.
        for (var i = 0; i < Budget; i++)
        {
            survivor.Release();
        }

        Assert.True(await joined.WaitAsync(s_guard));
        Assert.InRange(await Count(options), 1, Budget);
        joiner.Release();
    }

    [Fact]
    public async Task Restart_SurvivorCreatesTheNewEpoch_HandsOutNoIdleLeaseUntilRedisHasItAndTheJoinerWaits()
    {
        // An adaptive fleet grew its budget to 4; the restart loses it, and the new epoch's budget is the initial 2.
        var options = Options() with { Adaptive = new AdaptiveBudgetOptions { InitialBudget = 2, MaxBudget = 8 }, Linger = TimeSpan.FromMilliseconds(1500) };
        await Eventually.TrueAsync(() => Task.FromResult(redis.Connection.IsConnected), "the shared connection is back after another test's restart", s_guard);
        await redis.Connection.GetDatabase().HashSetAsync($"fanout:{{{options.Key}}}:budget", [new("b", 4), new("g", 0), new("s", 0)]);
        await using var survivorConnection = await redis.Connect();
        await using var survivor = RedisConcurrencyLimit.Create(survivorConnection, options);
        for (var i = 0; i < 4; i++)
        {
            Assert.True(await survivor.WaitAsync().WaitAsync(s_guard));
        }

        survivor.Release();
        survivor.Release(); // two items running, two leases idle here (for the linger)
        Assert.Equal(2, survivor.IdleLeases);

        await RestartLosingTheData(survivorConnection);

        // Redis may have lost those two leases (it did): a new item here must not run on one.
        Assert.False(survivor.TryAcquire(), "An idle lease Redis had lost was handed to a new item.");

        // (A wait while the connection is still down fails under WhenUnavailable = Fail, as documented: wait for it.)
        await Eventually.TrueAsync(() => Task.FromResult(survivorConnection.IsConnected), "the survivor reconnected", s_guard);
        Assert.False(survivor.TryAcquire(), "An idle lease Redis had lost was handed to a new item.");
        var next = survivor.WaitAsync();

        // The survivor's renewal creates the new epoch and re-registers what the budget of 2 holds: its two running items.
        await Eventually.TrueAsync(async () => next.IsCompleted || (survivor.LeasesHeld == 2 && await Count(options) == 2), "the survivor re-registered its running items", s_guard);
        Assert.False(next.IsCompleted, "A new item started on a lease beyond the new budget of 2.");
        Assert.Equal(2, survivor.InFlight);

        // The joiner comes last, within the grace the survivor started. Once the survivor's two items end, the waiting
        // item there and the joiner share the budget of 2.
        await using var joinerConnection = await redis.Connect();
        await using var joiner = RedisConcurrencyLimit.Create(joinerConnection, options);
        var joined = joiner.WaitAsync();
        Assert.False(joined.IsCompleted);
        survivor.Release();
        survivor.Release();
        Assert.True(await next.WaitAsync(s_guard));
        Assert.True(await joined.WaitAsync(s_guard));
        Assert.Equal(2, survivor.InFlight + joiner.InFlight);
        Assert.InRange(await Count(options), 1, 2);
        survivor.Release();
        joiner.Release();
    }

    private static RedisLimitOptions Options() => new()
    {
        Key = $"restart-{Guid.NewGuid():N}",
        BatchSize = 4,
        LeaseTime = TimeSpan.FromSeconds(3),
        PollInterval = TimeSpan.FromMilliseconds(50),
        RedisTimeout = TimeSpan.FromSeconds(1),
    };

    /// <summary>Kills the server, waits until <paramref name="connection"/> (a survivor's) saw its connection fail, starts a fresh one.</summary>
    private async Task RestartLosingTheData(ConnectionMultiplexer connection)
    {
        // Registered after the limit's own handler: the multiplexer raises both in one call, in order, so when this one
        // runs the limit has been told.
        var failed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        connection.ConnectionFailed += (_, e) =>
        {
            if (e.ConnectionType == ConnectionType.Interactive)
            {
                failed.TrySetResult();
            }
        };
        redis.Kill();
        await failed.Task.WaitAsync(s_guard);
        await redis.StartAgainAsync();
    }

    private async Task<string[]> Members(RedisLimitOptions options)
    {
        var members = await redis.Connection.GetDatabase().SortedSetRangeByRankAsync($"fanout:{{{options.Key}}}:leases");
        return [.. members.Select(member => (string)member!)];
    }

    private Task<long> Count(RedisLimitOptions options) => redis.Connection.GetDatabase().SortedSetLengthAsync($"fanout:{{{options.Key}}}:leases");
}
