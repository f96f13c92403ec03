using FanOut.Redis.Tests.Infrastructure;

using StackExchange.Redis;

namespace FanOut.Redis.Tests.Faults;

/// <summary>
/// The Redis limit under an unanswered Redis (<c>CLIENT PAUSE ... ALL</c>: StackExchange.Redis then throws
/// <see cref="RedisTimeoutException"/>, a <see cref="TimeoutException"/> and not a <see cref="RedisException"/>) and a
/// stopped one, with the connection's default backlog and with <see cref="BacklogPolicy.FailFast"/>.
/// </summary>
/// <remarks>The bounds here are hang guards (seconds), never measurements.</remarks>
public sealed class RedisTimeoutTests(RedisServer redis) : IClassFixture<RedisServer>
{
    private static readonly TimeSpan s_guard = TimeSpan.FromSeconds(20);

    /// <summary>Well under the 10 s a connection of the stopped-server tests waits per command, far above the limit's 1 s.</summary>
    private static readonly TimeSpan s_bound = TimeSpan.FromSeconds(8);

    /// <summary>Commands time out after 300 ms, checked every 100 ms, so a 1.5 s pause times them out.</summary>
    private const int CommandTimeoutMs = 300;

    public static TheoryData<string> Backlogs => [nameof(BacklogPolicy.Default), nameof(BacklogPolicy.FailFast)];

    public static TheoryData<string, bool> StoppedCases => new()
    {
        { nameof(BacklogPolicy.Default), true },
        { nameof(BacklogPolicy.Default), false },
        { nameof(BacklogPolicy.FailFast), true },
        { nameof(BacklogPolicy.FailFast), false },
    };

    [Fact]
    public async Task Heartbeat_OneRenewalTimesOut_KeepsRenewingAndTheBudgetHolds()
    {
        // A lease of 3 s outlives the 1.5 s pause, so only a heartbeat that stopped for good could lose it.
        var options = Options(budget: 1) with { LeaseTime = TimeSpan.FromSeconds(3) };
        await using var connection = await Connect(BacklogPolicy.FailFast);
        await using var holder = RedisConcurrencyLimit.Create(connection, options);
        await using var other = RedisConcurrencyLimit.Create(redis.Connection, options);
        await FirstPermit.TakeAsync(holder);

        await PauseThroughAsync(TimeSpan.FromMilliseconds(1500));

        // Asked after the pause (a wait during it would fail, as WhenUnavailable = Fail says): the budget is still taken.
        var waiting = other.WaitAsync(CancellationToken.None);
        await Task.Delay(options.LeaseTime * 2);

        Assert.False(waiting.IsCompleted, "Two permits under Budget = 1: the holder stopped renewing after a timed-out renewal.");
        Assert.Equal(1, await LeaseCount(options));
        holder.Release();
        Assert.True(await waiting.WaitAsync(s_guard));
        other.Release();
    }

    [Fact]
    public async Task WaitAsync_AcquireTimesOutUnderFail_ThrowsUnavailableExceptionThenRecovers()
    {
        var options = Options(budget: 2);
        await using var connection = await Connect(BacklogPolicy.FailFast);
        await using var limit = await WarmedUp(connection, options);

        var pause = PauseThroughAsync(TimeSpan.FromMilliseconds(1500));
        await Task.Delay(100);
        var failure = await Assert.ThrowsAsync<RedisLimitUnavailableException>(() => limit.WaitAsync(CancellationToken.None).WaitAsync(s_guard));
        await pause;

        Assert.IsAssignableFrom<TimeoutException>(failure.InnerException);
        Assert.Equal(0, limit.InFlight);
        Assert.True(await limit.WaitAsync(CancellationToken.None).WaitAsync(s_guard), "The limit did not recover after the pause.");
        limit.Release();
        await limit.DisposeAsync();
        Assert.Equal(0, await LeaseCount(options));
    }

    [Fact]
    public async Task WaitAsync_AcquireTimesOutUnderFallback_RunsOnTheFallbackLimit()
    {
        var options = Options(budget: 4) with { WhenUnavailable = RedisUnavailablePolicy.FallBackToLocal, FallbackLimit = 1 };
        await using var connection = await Connect(BacklogPolicy.FailFast);
        await using var limit = await WarmedUp(connection, options);

        var pause = PauseThroughAsync(TimeSpan.FromMilliseconds(1500));
        await Task.Delay(100);
        var granted = limit.WaitAsync(CancellationToken.None);
        var completed = await Task.WhenAny(granted, pause);

        Assert.Same(granted, completed); // served on the fallback while Redis is still paused
        Assert.True(await granted);
        Assert.Equal(1, limit.InFlight);
        limit.Release();
        await pause;
        await limit.DisposeAsync();
        await Eventually.TrueAsync(async () => await LeaseCount(options) == 0, "every lease went back");
    }

    [Theory]
    [MemberData(nameof(StoppedCases))]
    public async Task WaitAsync_RedisStoppedBeforeTheFirstAcquire_EndsUnderEitherPolicyLongBeforeTheConnectionTimesOut(string backlog, bool connectedFirst)
    {
        // The connection would wait 10 s for each command; the limit knows Redis is gone after its own RedisTimeout (1 s).
        // The 8 s guard only says "long before the connection's timeout", it measures nothing.
        var failOptions = Options(budget: 2);
        var fallbackOptions = Options(budget: 2) with { WhenUnavailable = RedisUnavailablePolicy.FallBackToLocal, FallbackLimit = 1 };
        if (!connectedFirst)
        {
            redis.Kill();
        }

        try
        {
            await using var connection = await Connect(Backlog(backlog), timeoutMs: 10_000);
            await using var failing = RedisConcurrencyLimit.Create(connection, failOptions);
            await using var falling = RedisConcurrencyLimit.Create(connection, fallbackOptions);
            if (connectedFirst)
            {
                redis.Kill();
            }

            // The first acquire subscribes first: neither the subscription nor the script may wait for Redis for long.
            var failure = await Assert.ThrowsAsync<RedisLimitUnavailableException>(() => failing.WaitAsync(CancellationToken.None).WaitAsync(s_bound));
            Assert.Contains(redis.Endpoint, failure.Message, StringComparison.Ordinal);
            Assert.Contains(nameof(RedisUnavailablePolicy.FallBackToLocal), failure.Message, StringComparison.Ordinal);
            Assert.DoesNotContain("\n", failure.Message, StringComparison.Ordinal);
            Assert.True(await falling.WaitAsync(CancellationToken.None).WaitAsync(s_bound));
            falling.Release();
            await failing.DisposeAsync().AsTask().WaitAsync(s_bound);
            await falling.DisposeAsync().AsTask().WaitAsync(s_bound);
        }
        finally
        {
            await redis.StartAgainAsync();
        }
    }

    [Fact]
    public async Task ConnectAsync_NothingListens_FanOutFailsWithOneLineNamingTheEndpointAndDisposeReturns()
    {
        // ConnectAsync's defaults would wait 5 s to connect and 5 s per command in the backlog; the limit answers after 1 s.
        var endpoint = $"127.0.0.1:{FreePort()}";
        var limit = await RedisConcurrencyLimit.ConnectAsync(endpoint, Options(budget: 2)).WaitAsync(s_bound);

        var run = Enumerable.Range(0, 4).FanOutAsync(async (int item, CancellationToken token) => await Task.Delay(1, token), new FanOutOptions { Limit = limit });
        var failure = await Assert.ThrowsAsync<RedisLimitUnavailableException>(() => run.WaitAsync(s_bound));

        Assert.Contains(endpoint, failure.Message, StringComparison.Ordinal);
        Assert.Contains($"WhenUnavailable = {nameof(RedisUnavailablePolicy.FallBackToLocal)}", failure.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("\n", failure.Message, StringComparison.Ordinal);
        await limit.DisposeAsync().AsTask().WaitAsync(s_bound);
    }

    [Fact]
    public async Task DisposeAsync_AfterARenewalTimedOut_DoesNotThrowAndReturnsLeasesLeavesAndUnsubscribes()
    {
        var options = Options(budget: 2) with { LeaseTime = TimeSpan.FromMilliseconds(1500) };
        await using var connection = await Connect(BacklogPolicy.FailFast);
        var limit = RedisConcurrencyLimit.Create(connection, options);
        await FirstPermit.TakeAsync(limit);

        await PauseThroughAsync(TimeSpan.FromMilliseconds(1000)); // a renewal (every 500 ms) times out

        limit.Release();
        await limit.DisposeAsync().AsTask().WaitAsync(s_guard);

        Assert.Equal(0, await LeaseCount(options));
        Assert.Equal(0, await redis.Connection.GetDatabase().SortedSetLengthAsync($"fanout:{{{options.Key}}}:clients"));
        var subscribers = await redis.Connection.GetServer(redis.Endpoint).SubscriptionSubscriberCountAsync(RedisChannel.Literal($"fanout:{{{options.Key}}}:released"));
        Assert.Equal(0, subscribers);
    }

    [Theory]
    [MemberData(nameof(Backlogs))]
    public async Task DisposeAsync_RedisStopped_ReturnsWithoutThrowing(string backlog)
    {
        var options = Options(budget: 2);
        await using var connection = await Connect(Backlog(backlog), timeoutMs: 10_000);
        var limit = RedisConcurrencyLimit.Create(connection, options);
        Assert.True(await limit.WaitAsync(CancellationToken.None).WaitAsync(s_guard));
        redis.Kill();
        try
        {
            limit.Release();
            await limit.DisposeAsync().AsTask().WaitAsync(s_bound); // the connection alone would wait 10 s per command
        }
        finally
        {
            await redis.StartAgainAsync();
        }
    }

    [Fact]
    public async Task ReturnLoop_AReleaseTimesOut_KeepsReturningLeases()
    {
        var options = Options(budget: 2);
        await using var connection = await Connect(BacklogPolicy.FailFast);
        await using var limit = RedisConcurrencyLimit.Create(connection, options);
        await FirstPermit.TakeAsync(limit);

        var pause = PauseThroughAsync(TimeSpan.FromMilliseconds(1500));
        await Task.Delay(100);
        limit.Release(); // lingers 0 ms, then its release is not answered before it times out
        await pause;

        Assert.True(await limit.WaitAsync(CancellationToken.None).WaitAsync(s_guard));
        limit.Release();
        await Eventually.TrueAsync(async () => await LeaseCount(options) == 0 && limit.LeasesHeld == 0, "the idle lease went back to Redis", TimeSpan.FromSeconds(10));
    }

    /// <summary>A limit that already leased once (subscribed, registered), holding nothing.</summary>
    private async Task<RedisConcurrencyLimit> WarmedUp(IConnectionMultiplexer connection, RedisLimitOptions options)
    {
        var limit = RedisConcurrencyLimit.Create(connection, options);
        await FirstPermit.TakeAsync(limit);
        limit.Release();
        await Eventually.TrueAsync(async () => await LeaseCount(options) == 0 && limit.LeasesHeld == 0, "the warm-up lease went back");
        return limit;
    }

    /// <summary>Pauses every client for <paramref name="pause"/> and returns once the pause is over (a little after).</summary>
    private async Task PauseThroughAsync(TimeSpan pause)
    {
        await redis.PauseAsync(pause);
        await Task.Delay(pause + TimeSpan.FromMilliseconds(100));
    }

    private Task<ConnectionMultiplexer> Connect(BacklogPolicy backlog, int timeoutMs = CommandTimeoutMs) => ConnectionMultiplexer.ConnectAsync(new ConfigurationOptions
    {
        EndPoints = { redis.Endpoint },
        AbortOnConnectFail = false,
        AsyncTimeout = timeoutMs,
        SyncTimeout = timeoutMs,
        HeartbeatInterval = TimeSpan.FromMilliseconds(100),
        ConnectTimeout = 1000,
        ConnectRetry = 1,
        ReconnectRetryPolicy = new LinearRetry(100),
        BacklogPolicy = backlog,
    });

    private static int FreePort()
    {
        using var listener = new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, 0);
        listener.Start();
        return ((System.Net.IPEndPoint)listener.LocalEndpoint).Port;
    }

    private static BacklogPolicy Backlog(string name) => name == nameof(BacklogPolicy.FailFast) ? BacklogPolicy.FailFast : BacklogPolicy.Default;

    private static RedisLimitOptions Options(int budget) => new()
    {
        Key = $"test-{Guid.NewGuid():N}",
        Budget = budget,
        BatchSize = 1,
        LeaseTime = TimeSpan.FromSeconds(2),
        Linger = TimeSpan.Zero,
        PollInterval = TimeSpan.FromMilliseconds(50),
    };

    private Task<long> LeaseCount(RedisLimitOptions options) =>
        redis.Connection.GetDatabase().SortedSetLengthAsync($"fanout:{{{options.Key}}}:leases");
}
