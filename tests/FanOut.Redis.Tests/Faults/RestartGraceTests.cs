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
        // An adaptive fleet's budget is its processes' claims; the restart loses them, and the new epoch starts at the initial
        // budget until the survivor's claim comes back (every third of a lease time).
        var options = Options() with { Adaptive = new AdaptiveBudgetOptions { InitialBudget = 4, MaxBudget = 8 }, Linger = TimeSpan.FromMilliseconds(1500) };
        await Eventually.TrueAsync(() => Task.FromResult(redis.Connection.IsConnected), "the shared connection is back after another test's restart", s_guard);
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

        // (A wait while the connection is still down fails under WhenUnavailable = Fail, as documented: wait for it.) The
        // survivor's renewal creates the new epoch and re-registers what it holds (its claim of 4 is the new budget once sent
        // again, the initial 4 until then); an idle lease serves an item only once Redis has it again.
        await Eventually.TrueAsync(() => Task.FromResult(survivorConnection.IsConnected), "the survivor reconnected", s_guard);
        var next = survivor.WaitAsync();
        Assert.True(await next.WaitAsync(s_guard));
        Assert.Equal(3, survivor.InFlight);
        Assert.InRange(await Count(options), 3, 4);

        // The joiner comes last, within the grace the survivor started: it waits until the grace is over and room frees.
        await using var joinerConnection = await redis.Connect();
        await using var joiner = RedisConcurrencyLimit.Create(joinerConnection, options);
        var joined = joiner.WaitAsync();
        Assert.False(joined.IsCompleted);
        survivor.Release();
        survivor.Release();
        survivor.Release();
        Assert.True(await joined.WaitAsync(s_guard));
        Assert.Equal(1, joiner.InFlight);
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
