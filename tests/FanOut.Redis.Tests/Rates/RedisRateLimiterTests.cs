using System.Globalization;
using System.Threading.RateLimiting;

using FanOut.Redis.Tests.Infrastructure;

using StackExchange.Redis;

using Xunit.Abstractions;

namespace FanOut.Redis.Tests.Rates;

/// <summary>The fleet-wide rate limit against a real redis-server: each limiter on its own connection, as a process would be.</summary>
public sealed class RedisRateLimiterTests(RedisServer redis, ITestOutputHelper output) : IClassFixture<RedisServer>
{
    private static readonly TimeSpan s_guard = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task AcquireAsync_FourProcessesAtAFleetRate_GrantAtMostTheRateByTheServersClock()
    {
        const int Rate = 200;
        const int Burst = 10;
        var options = new RedisRateLimiterOptions { Key = $"rate-{Guid.NewGuid():N}", PermitLimit = Rate, Burst = Burst };
        var connections = new List<ConnectionMultiplexer>();
        var limiters = new List<RedisRateLimiter>();
        for (var i = 0; i < 4; i++)
        {
            connections.Add(await redis.Connect());
            limiters.Add(RedisRateLimiter.Create(connections[i], options));
        }

        long granted = 0;
        using var stop = new CancellationTokenSource(TimeSpan.FromSeconds(2));
        var start = await ServerMicroseconds();
        long last = 0;
        async Task WorkAsync(RedisRateLimiter limiter)
        {
            while (!stop.IsCancellationRequested)
            {
                try
                {
                    using var lease = await limiter.AcquireAsync(1, stop.Token);
                    Assert.True(lease.IsAcquired);
                    Interlocked.Increment(ref granted);
                }
                catch (OperationCanceledException)
                {
                    return;
                }
            }
        }

        await Task.WhenAll(limiters.SelectMany(limiter => Enumerable.Range(0, 64).Select(_ => WorkAsync(limiter)))).WaitAsync(s_guard);
        last = await ServerMicroseconds();

        // GCRA: at most the burst plus the rate times the time elapsed on the server's clock, whatever the clients' clocks say.
        var seconds = (last - start) / 1e6;
        var bound = Burst + (Rate * seconds);
        output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{granted} granted in {seconds:0.000} s of server time: {granted / seconds:0.0}/s for a fleet rate of {Rate}/s (bound {bound:0})"));
        Assert.InRange(granted, (long)(0.9 * Rate * seconds), (long)Math.Ceiling(bound) + 1);
        foreach (var limiter in limiters)
        {
            await limiter.DisposeAsync();
        }

        foreach (var connection in connections)
        {
            await connection.DisposeAsync();
        }
    }

    [Fact]
    public async Task AttemptAcquire_NeverTouchesTheNetwork_SaysToAcquireAsync()
    {
        await using var limiter = RedisRateLimiter.Create(redis.Connection, new RedisRateLimiterOptions { Key = $"rate-{Guid.NewGuid():N}", PermitLimit = 10 });

        using var attempt = limiter.AttemptAcquire(1);
        using var zero = limiter.AttemptAcquire(0);
        using var acquired = await limiter.AcquireAsync(1).AsTask().WaitAsync(s_guard);

        Assert.False(attempt.IsAcquired);
        Assert.True(attempt.TryGetMetadata(MetadataName.RetryAfter, out var retryAfter));
        Assert.Equal(TimeSpan.Zero, retryAfter);
        Assert.True(zero.IsAcquired);
        Assert.True(acquired.IsAcquired);
        Assert.Throws<ArgumentOutOfRangeException>(() => limiter.AttemptAcquire(11));
    }

    [Fact]
    public async Task AcquireAsync_BurstSpent_WaitsForTheNextPermitByTheServersClock()
    {
        // One permit per 200 ms, no burst beyond one: the second acquisition waits for the server to say so.
        await using var limiter = RedisRateLimiter.Create(redis.Connection, new RedisRateLimiterOptions { Key = $"rate-{Guid.NewGuid():N}", PermitLimit = 5, Burst = 1 });
        var before = await ServerMicroseconds();
        using (await limiter.AcquireAsync(1).AsTask().WaitAsync(s_guard))
        {
        }

        using var second = await limiter.AcquireAsync(1).AsTask().WaitAsync(s_guard);
        var after = await ServerMicroseconds();

        Assert.True(second.IsAcquired);
        Assert.True(after - before >= 200_000, $"Two permits {after - before} us apart on the server's clock at one per 200 ms.");
    }

    [Fact]
    public async Task CreatePartitioned_TwoPartitions_EachHasItsOwnRate()
    {
        using var limiter = RedisRateLimiter.CreatePartitioned<string>(redis.Connection, tenant => tenant, new RedisRateLimiterOptions { Key = $"rate-{Guid.NewGuid():N}", PermitLimit = 1, Window = TimeSpan.FromMinutes(1) });

        using var first = await limiter.AcquireAsync("a").AsTask().WaitAsync(s_guard);
        using var other = await limiter.AcquireAsync("b").AsTask().WaitAsync(s_guard);
        using var canceled = new CancellationTokenSource(TimeSpan.FromMilliseconds(200));
        var again = limiter.AcquireAsync("a", 1, canceled.Token).AsTask();

        Assert.True(first.IsAcquired);
        Assert.True(other.IsAcquired);
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => again.WaitAsync(s_guard)); // a's minute is spent
    }

    [Fact]
    public async Task AcquireAsync_RedisUnreachable_ThrowsUnavailableNamingTheKey()
    {
        await using var nowhere = await ConnectionMultiplexer.ConnectAsync(new ConfigurationOptions { EndPoints = { "127.0.0.1:1" }, AbortOnConnectFail = false, BacklogPolicy = BacklogPolicy.FailFast });
        await using var limiter = RedisRateLimiter.Create(nowhere, new RedisRateLimiterOptions { Key = "orders-api", PermitLimit = 10, RedisTimeout = TimeSpan.FromMilliseconds(200) });

        var error = await Assert.ThrowsAsync<RedisLimitUnavailableException>(() => limiter.AcquireAsync(1).AsTask().WaitAsync(s_guard));

        Assert.Contains("orders-api", error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(true, 5)] // two processes used the rate: half of 100/s each, a burst of half of 10
    [InlineData(false, 10)] // the ceiling itself: 100/s, a burst of 10
    public async Task AcquireAsync_RedisGoneUnderFallBackToLocal_TakesTheLastShareOfTheRateLocally(bool atLastShare, int burst)
    {
        await using var server = await FleetWorker.LocalRedisServer.StartAsync();
        var time = new Microsoft.Extensions.Time.Testing.FakeTimeProvider();
        var options = FallbackRate(time) with { FallbackAtLastShare = atLastShare };
        await using var mine = await Connect(server.Endpoint);
        await using var theirs = await Connect(server.Endpoint);
        using var limiter = RedisRateLimiter.Create(mine, options);
        using var other = RedisRateLimiter.Create(theirs, options);
        using (await other.AcquireAsync(1).AsTask().WaitAsync(s_guard))
        using (await limiter.AcquireAsync(1).AsTask().WaitAsync(s_guard))
        {
            // Both processes used the rate: the second answer said two.
        }

        server.Kill();
        await Eventually.TrueAsync(() => Task.FromResult(!mine.IsConnected), "the connection sees Redis gone");

        // The local rate starts with a full bucket: the burst at once, then one permit per interval of the fallback's rate.
        for (var i = 0; i < burst; i++)
        {
            using var lease = await limiter.AcquireAsync(1).AsTask().WaitAsync(s_guard);
            Assert.True(lease.IsAcquired);
        }

        var next = limiter.AcquireAsync(1).AsTask();
        var interval = TimeSpan.FromSeconds(1.0 / (100 / (10 / burst)));
        time.Advance(interval - TimeSpan.FromMilliseconds(1));
        Assert.False(next.IsCompleted, $"a permit beyond the fallback's burst before its interval: {next.Status} {next.Exception?.InnerException}");
        time.Advance(TimeSpan.FromMilliseconds(1));
        using var late = await next.WaitAsync(s_guard);
        Assert.True(late.IsAcquired);
        Assert.Equal(atLastShare ? 50 : 100, limiter.FallbackPermitLimit);
    }

    [Fact]
    public async Task FallbackPermitLimit_RedisRestartedAndFirstToAnswer_KeepsTheShareSeenBefore()
    {
        // After a restart the set of processes using the rate is empty: the first answer says 1, which must not make this
        // process's fallback the whole rate while the others have not asked again yet.
        await using var server = await FleetWorker.LocalRedisServer.StartAsync();
        var time = new Microsoft.Extensions.Time.Testing.FakeTimeProvider();
        var options = FallbackRate(time);
        await using var mine = await Connect(server.Endpoint, reconnectMs: 100);
        await using var theirs = await Connect(server.Endpoint, reconnectMs: 100);
        using var limiter = RedisRateLimiter.Create(mine, options);
        using var other = RedisRateLimiter.Create(theirs, options);
        using (await other.AcquireAsync(1).AsTask().WaitAsync(s_guard))
        using (await limiter.AcquireAsync(1).AsTask().WaitAsync(s_guard))
        {
            Assert.Equal(50, limiter.FallbackPermitLimit);
        }

        await server.RestartAsync(TimeSpan.Zero);
        await Eventually.TrueAsync(() => Task.FromResult(mine.IsConnected), "the connection back on the restarted server");
        using (await limiter.AcquireAsync(1).AsTask().WaitAsync(s_guard))
        {
            // Answered by the restarted server (its set of processes has only this one), not by the fallback.
            Assert.Equal(1, await mine.GetDatabase().SortedSetLengthAsync($"fanout:{{{options.Key}}}:raters"));
        }

        Assert.Equal(50, limiter.FallbackPermitLimit); // the restarted server said 1
    }

    /// <summary>A rate of 100/s (a burst of 10) on a fresh key that falls back to 100/s locally while Redis is unreachable (at the last share, by default), on <paramref name="time"/>.</summary>
    private static RedisRateLimiterOptions FallbackRate(TimeProvider time) => new()
    {
        Key = $"rate-{Guid.NewGuid():N}",
        PermitLimit = 100,
        Burst = 10,
        WhenUnavailable = RedisUnavailablePolicy.FallBackToLocal,
        FallbackPermitLimit = 100,
        TimeProvider = time,
    };

    private static Task<ConnectionMultiplexer> Connect(string endpoint, int reconnectMs = 60_000) => ConnectionMultiplexer.ConnectAsync(new ConfigurationOptions
    {
        EndPoints = { endpoint },
        AbortOnConnectFail = false,
        BacklogPolicy = BacklogPolicy.FailFast,
        ReconnectRetryPolicy = new LinearRetry(reconnectMs),
    });

    private async Task<long> ServerMicroseconds()
    {
        var time = (RedisResult[])(await redis.Connection.GetDatabase().ExecuteAsync("TIME"))!;
        return ((long)time[0] * 1_000_000) + (long)time[1];
    }
}
