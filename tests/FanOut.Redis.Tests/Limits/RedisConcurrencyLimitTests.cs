using FanOut.Redis.Tests.Infrastructure;

using StackExchange.Redis;

namespace FanOut.Redis.Tests.Limits;

/// <summary>The ConcurrencyLimit contract and the lease protocol, in one process, against a real redis-server.</summary>
public sealed class RedisConcurrencyLimitTests(RedisServer redis) : IClassFixture<RedisServer>
{
    private static readonly TimeSpan s_guard = TimeSpan.FromSeconds(20);

    [Fact]
    public async Task FanOutAsync_TwoLimitsOneKey_NeverAboveBudgetAndInFlightBackToZero()
    {
        var options = Options(budget: 5);
        await using var first = RedisConcurrencyLimit.Create(redis.Connection, options);
        await using var second = RedisConcurrencyLimit.Create(redis.Connection, options);
        var running = 0;
        var peak = 0;
        async ValueTask Body(int item, CancellationToken token)
        {
            var now = Interlocked.Increment(ref running);
            InterlockedMax(ref peak, now);
            await Task.Delay(2, token);
            Interlocked.Decrement(ref running);
        }

        await Task.WhenAll(
            Enumerable.Range(0, 150).FanOutAsync(Body, new FanOutOptions { Limit = first }),
            Enumerable.Range(0, 150).FanOutAsync(Body, new FanOutOptions { Limit = second })).WaitAsync(s_guard);

        Assert.InRange(peak, 2, 5);
        Assert.Equal(0, first.InFlight);
        Assert.Equal(0, second.InFlight);
        await first.DisposeAsync();
        await second.DisposeAsync();
        Assert.Equal(0, await LeaseCount(options));
    }

    [Fact]
    public async Task TryAcquire_IdleLeaseHeldHere_SucceedsWithoutARoundTrip()
    {
        await using var limit = RedisConcurrencyLimit.Create(redis.Connection, Options(budget: 3) with { Linger = TimeSpan.FromSeconds(1) });
        Assert.True(await limit.WaitAsync(CancellationToken.None).WaitAsync(s_guard));
        limit.Release();
        var roundTrips = limit.RoundTrips;

        Assert.True(limit.TryAcquire());

        Assert.Equal(roundTrips, limit.RoundTrips);
        Assert.Equal(1, limit.InFlight);
        limit.Release();
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public async Task FanOutAsync_TwoProcessesAtFullBudget_ReuseTheirLeasesInsteadOfARoundTripPerItem()
    {
        // Two limits on their own connections, as two processes: each run's workers outnumber its share of the budget of 8,
        // so a worker waits after every item while the budget stays full and its share comes back from its own items.
        var options = Options(budget: 8) with { BatchSize = 8 };
        using var firstConnection = await redis.Connect();
        using var secondConnection = await redis.Connect();
        await using var first = RedisConcurrencyLimit.Create(firstConnection, options);
        await using var second = RedisConcurrencyLimit.Create(secondConnection, options);
        const int ItemsEach = 600;
        static async ValueTask Body(int item, CancellationToken token) => await Task.Delay(1, token);

        await Task.WhenAll(
            Enumerable.Range(0, ItemsEach).FanOutAsync(Body, new FanOutOptions { Limit = first }),
            Enumerable.Range(0, ItemsEach).FanOutAsync(Body, new FanOutOptions { Limit = second })).WaitAsync(s_guard);

        // A new local waiter used to send an acquire that the full budget turned down: 0.2-0.5 round trips per item. Reused
        // leases cost none; what is left is the fair-share hand-backs, the releases they wake, and the polls.
        var perItem = (double)(first.RoundTrips + second.RoundTrips) / (2 * ItemsEach);
        Assert.True(perItem < 0.1, $"{perItem:F3} round trips per item ({first.RoundTrips} + {second.RoundTrips} for {2 * ItemsEach} items)");
    }

    [Fact]
    public async Task WaitAsync_CanceledWhileWaiting_LeavesNoPermitBehind()
    {
        var options = Options(budget: 1);
        await using var holder = RedisConcurrencyLimit.Create(redis.Connection, options);
        await using var waiter = RedisConcurrencyLimit.Create(redis.Connection, options);
        Assert.True(await holder.WaitAsync(CancellationToken.None).WaitAsync(s_guard));
        using var cancel = new CancellationTokenSource();
        var waiting = waiter.WaitAsync(cancel.Token);
        await Task.Delay(100);
        Assert.False(waiting.IsCompleted);

        await cancel.CancelAsync();

        Assert.False(await waiting.WaitAsync(s_guard));
        Assert.Equal(0, waiter.InFlight);
        Assert.Equal(0, waiter.LeasesHeld);
        Assert.Equal(1, await LeaseCount(options));
        holder.Release();
        await holder.DisposeAsync();
        Assert.True(await waiter.WaitAsync(CancellationToken.None).WaitAsync(s_guard)); // the budget is whole again
        waiter.Release();
        await waiter.DisposeAsync();
        Assert.Equal(0, await LeaseCount(options));
    }

    [Fact]
    public async Task Heartbeat_ItemHeldPastItsFirstLease_KeepsItsPermit()
    {
        // A lease of 4 s renewed every 1.33 s: only a stall of well over two seconds could lose it on a loaded CI machine.
        var options = Options(budget: 1) with { LeaseTime = TimeSpan.FromSeconds(4), Linger = TimeSpan.Zero, PollInterval = TimeSpan.FromMilliseconds(50) };
        await using var holder = RedisConcurrencyLimit.Create(redis.Connection, options);
        await using var other = RedisConcurrencyLimit.Create(redis.Connection, options);
        Assert.True(await holder.WaitAsync(CancellationToken.None).WaitAsync(s_guard));
        var firstExpiry = await LeaseExpiry(options);
        Assert.NotNull(firstExpiry);

        // The event: a renewal made by Redis's clock at or after the moment the first lease would have expired.
        var waiting = other.WaitAsync(CancellationToken.None);
        using var guard = new CancellationTokenSource(s_guard);
        double? expiry;
        while ((expiry = await LeaseExpiry(options)) is { } now && now < firstExpiry + options.LeaseTime.TotalMilliseconds && !waiting.IsCompleted)
        {
            await Task.Delay(50, guard.Token);
        }

        Assert.False(waiting.IsCompleted, "The lease expired although its holder renewed it.");
        Assert.NotNull(expiry);
        Assert.Equal(1, await LeaseCount(options));
        holder.Release();
        Assert.True(await waiting.WaitAsync(s_guard));
        other.Release();
    }

    [Fact]
    public async Task WaitAsync_RedisUnreachable_FailsWithUnavailableException()
    {
        await using var nowhere = await NowhereConnection();
        await using var limit = RedisConcurrencyLimit.Create(nowhere, Options(budget: 2));

        var failure = await Assert.ThrowsAsync<RedisLimitUnavailableException>(() => limit.WaitAsync(CancellationToken.None).WaitAsync(s_guard));

        Assert.Contains("FallBackToLocal", failure.Message, StringComparison.Ordinal);
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public async Task WaitAsync_RedisUnreachableWithFallback_GrantsUpToTheFallbackLimit()
    {
        await using var nowhere = await NowhereConnection();
        await using var limit = RedisConcurrencyLimit.Create(nowhere, Options(budget: 8) with { WhenUnavailable = RedisUnavailablePolicy.FallBackToLocal, FallbackLimit = 2, PollInterval = TimeSpan.FromMilliseconds(20) });

        Assert.True(await limit.WaitAsync(CancellationToken.None).WaitAsync(s_guard));
        Assert.True(await limit.WaitAsync(CancellationToken.None).WaitAsync(s_guard));
        var third = limit.WaitAsync(CancellationToken.None);
        await Task.Delay(200);
        Assert.False(third.IsCompleted);
        Assert.Equal(2, limit.InFlight);

        limit.Release();

        Assert.True(await third.WaitAsync(s_guard));
        limit.Release();
        limit.Release();
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public async Task Restart_RedisLosesItsData_WaiterFailsAndHolderReRegistersWithoutDoubleCounting()
    {
        var options = Options(budget: 2) with { LeaseTime = TimeSpan.FromSeconds(1), PollInterval = TimeSpan.FromMilliseconds(50) };
        await using var connection = await redis.Connect();
        await using var holder = RedisConcurrencyLimit.Create(connection, options);
        await using var waiter = RedisConcurrencyLimit.Create(connection, options);
        Assert.True(await holder.WaitAsync(CancellationToken.None).WaitAsync(s_guard));
        Assert.True(await holder.WaitAsync(CancellationToken.None).WaitAsync(s_guard));
        var waiting = waiter.WaitAsync(CancellationToken.None);

        await redis.RestartAsync(TimeSpan.FromMilliseconds(300));

        // Documented: a wait that needs Redis while it is down fails (WhenUnavailable = Fail); running items keep their permits.
        await Assert.ThrowsAsync<RedisLimitUnavailableException>(() => waiting.WaitAsync(s_guard));
        Assert.Equal(2, holder.InFlight);

        // The holder's heartbeat re-registers its two leases in the fresh Redis; a new waiter finds the budget full.
        await Eventually.TrueAsync(async () => await LeaseCount(options, connection) == 2, "the holder re-registered its leases");
        var late = waiter.WaitAsync(CancellationToken.None);
        await Task.Delay(options.LeaseTime * 2);
        Assert.False(late.IsCompleted, "A permit was counted twice: the budget had room although both permits were held.");
        Assert.Equal(2, await LeaseCount(options, connection));

        holder.Release();
        Assert.True(await late.WaitAsync(s_guard));
        Assert.InRange(await LeaseCount(options, connection), 1, 2);
        waiter.Release();
        holder.Release();
        await holder.DisposeAsync();
        await waiter.DisposeAsync();
        Assert.Equal(0, await LeaseCount(options, connection));
    }

    [Fact]
    public async Task FanOutAsync_RedisRestartedMidRunWithFallback_CompletesAndNothingIsCountedTwiceAfter()
    {
        const int Budget = 4;
        var options = Options(Budget) with
        {
            LeaseTime = TimeSpan.FromSeconds(1),
            PollInterval = TimeSpan.FromMilliseconds(50),
            WhenUnavailable = RedisUnavailablePolicy.FallBackToLocal,
            FallbackLimit = 2,
        };
        await using var connection = await redis.Connect();
        await using var first = RedisConcurrencyLimit.Create(connection, options);
        await using var second = RedisConcurrencyLimit.Create(connection, options);
        var running = 0;
        var peak = 0;
        async ValueTask Body(int item, CancellationToken token)
        {
            InterlockedMax(ref peak, Interlocked.Increment(ref running));
            await Task.Delay(10, token);
            Interlocked.Decrement(ref running);
        }

        Task RunBoth(int items) => Task.WhenAll(
            Enumerable.Range(0, items).FanOutAsync(Body, new FanOutOptions { Limit = first }),
            Enumerable.Range(0, items).FanOutAsync(Body, new FanOutOptions { Limit = second }));

        // Documented: with FallBackToLocal the runs carry on through the outage (each process at most its fallback of 2 without Redis).
        var during = RunBoth(600);
        await Task.Delay(300);
        await redis.RestartAsync(TimeSpan.FromMilliseconds(300));
        var fleetPeak = await SampleLeasesUntil(during, options, connection);
        await during.WaitAsync(s_guard);
        Assert.InRange(fleetPeak, 0, Budget); // Redis itself never counted a permit twice

        // After: both processes share the budget again, and nothing left over counts against it.
        Volatile.Write(ref peak, 0);
        var after = RunBoth(200);
        fleetPeak = await SampleLeasesUntil(after, options, connection);
        await after.WaitAsync(s_guard);
        Assert.InRange(Volatile.Read(ref peak), 2, Budget);
        Assert.InRange(fleetPeak, 1, Budget);
        Assert.Equal(0, first.InFlight + second.InFlight);
        await first.DisposeAsync();
        await second.DisposeAsync();
        Assert.Equal(0, await LeaseCount(options, connection));
    }

    [Fact]
    public async Task Release_AnotherClientLeftShort_HandsLeasesBackUntilSharesAreFair()
    {
        var options = Options(budget: 4) with { PollInterval = TimeSpan.FromMilliseconds(50) };
        await using var early = RedisConcurrencyLimit.Create(redis.Connection, options);
        await using var late = RedisConcurrencyLimit.Create(redis.Connection, options);
        using var stop = new CancellationTokenSource();

        // Workers as the worker loop runs them: a permit per item, given back after each item.
        async Task Worker(RedisConcurrencyLimit limit)
        {
            while (!stop.IsCancellationRequested)
            {
                if (!limit.TryAcquire() && !await limit.WaitAsync(stop.Token))
                {
                    return;
                }

                await Task.Delay(5, CancellationToken.None);
                limit.Release();
            }
        }

        var earlyWorkers = Enumerable.Range(0, 4).Select(_ => Worker(early)).ToArray();
        await Eventually.TrueAsync(() => Task.FromResult(early.LeasesHeld == 4), "the early client held the whole budget");
        var lateWorkers = Enumerable.Range(0, 4).Select(_ => Worker(late)).ToArray();

        // Fair share: ceil(4 / 2 clients) = 2 each while both want more.
        await Eventually.TrueAsync(() => Task.FromResult(late.LeasesHeld >= 2), "the late client reached its fair share");
        Assert.InRange(early.LeasesHeld + late.LeasesHeld, 2, 4);

        await stop.CancelAsync();
        await Task.WhenAll([.. earlyWorkers, .. lateWorkers]).WaitAsync(s_guard);
        Assert.Equal(0, early.InFlight + late.InFlight);
    }

    [Fact]
    public void Create_FallbackPolicyWithoutFallbackLimit_ThrowsNamingIt()
    {
        var error = Assert.Throws<ArgumentOutOfRangeException>(() => RedisConcurrencyLimit.Create(redis.Connection, Options(budget: 2) with { WhenUnavailable = RedisUnavailablePolicy.FallBackToLocal }));

        Assert.Equal(nameof(RedisLimitOptions.FallbackLimit), error.ParamName);
    }

    /// <summary>The most leases Redis held while <paramref name="run"/> ran, sampled every 5 ms (samples during a reconnect are skipped).</summary>
    private async Task<long> SampleLeasesUntil(Task run, RedisLimitOptions options, IConnectionMultiplexer connection)
    {
        var peak = 0L;
        while (!run.IsCompleted)
        {
            try
            {
                peak = Math.Max(peak, await LeaseCount(options, connection));
            }
            catch (RedisConnectionException)
            {
                // Between reconnects; the next sample counts.
            }

            await Task.Delay(5);
        }

        return peak;
    }

    private static RedisLimitOptions Options(int budget) => new() { Key = $"test-{Guid.NewGuid():N}", Budget = budget, BatchSize = Math.Min(budget, 4), LeaseTime = TimeSpan.FromSeconds(2) };

    private Task<long> LeaseCount(RedisLimitOptions options, IConnectionMultiplexer? connection = null) =>
        (connection ?? redis.Connection).GetDatabase().SortedSetLengthAsync($"fanout:{{{options.Key}}}:leases");

    private async Task<double?> LeaseExpiry(RedisLimitOptions options)
    {
        var latest = await redis.Connection.GetDatabase().SortedSetRangeByRankWithScoresAsync($"fanout:{{{options.Key}}}:leases", -1, -1);
        return latest.Length == 0 ? null : latest[0].Score;
    }

    private static Task<ConnectionMultiplexer> NowhereConnection()
    {
        using var listener = new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, 0);
        listener.Start();
        var port = ((System.Net.IPEndPoint)listener.LocalEndpoint).Port;
        listener.Stop();
        return ConnectionMultiplexer.ConnectAsync(new ConfigurationOptions
        {
            EndPoints = { $"127.0.0.1:{port}" },
            AbortOnConnectFail = false,
            ConnectTimeout = 200,
            AsyncTimeout = 500,
            BacklogPolicy = BacklogPolicy.FailFast,
        });
    }

    private static void InterlockedMax(ref int target, int value)
    {
        var seen = Volatile.Read(ref target);
        while (value > seen)
        {
            var previous = Interlocked.CompareExchange(ref target, value, seen);
            if (previous == seen)
            {
                return;
            }

            seen = previous;
        }
    }
}
