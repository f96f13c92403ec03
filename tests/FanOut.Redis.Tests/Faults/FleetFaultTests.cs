using FanOut.Redis.Tests.Infrastructure;

using StackExchange.Redis;

namespace FanOut.Redis.Tests.Faults;

/// <summary>
/// Two limits on one key, each on its own connection (two processes as Redis sees them), under Redis faults with
/// <see cref="RedisUnavailablePolicy.Fail"/>: items running at once across both never exceed the budget, and no item runs
/// twice; a run either runs every item once or fails with <see cref="RedisLimitUnavailableException"/>.
/// </summary>
public sealed class FleetFaultTests(RedisServer redis) : IClassFixture<RedisServer>
{
    private static readonly TimeSpan s_guard = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task FanOutAsync_RedisPausedTwoSeconds_NeverAboveBudgetAndNoItemTwice()
    {
        var options = Options(budget: 4, leaseTime: TimeSpan.FromSeconds(6));
        var result = await RunTwoAsync(options, items: 400, () => redis.PauseAsync(TimeSpan.FromSeconds(2)));

        result.AssertHeld(options.Budget);
    }

    [Fact]
    public async Task FanOutAsync_RedisRestartedMidRun_NeverAboveBudgetAndNoItemTwice()
    {
        var options = Options(budget: 4, leaseTime: TimeSpan.FromSeconds(1));
        var result = await RunTwoAsync(options, items: 400, () => redis.RestartAsync(TimeSpan.FromMilliseconds(300)));

        result.AssertHeld(options.Budget);
    }

    [Fact]
    public async Task FanOutAsync_RedisOutOfMemory_NeverAboveBudgetAndNoItemTwice()
    {
        var options = Options(budget: 4, leaseTime: TimeSpan.FromSeconds(3));
        await using var admin = await ConnectionMultiplexer.ConnectAsync(new ConfigurationOptions { EndPoints = { redis.Endpoint }, AllowAdmin = true });
        var server = admin.GetServer(redis.Endpoint);
        try
        {
            var result = await RunTwoAsync(options, items: 400, async () =>
            {
                // maxmemory 1 byte with noeviction: every script's first write (the client heartbeat) is refused with OOM.
                await server.ConfigSetAsync("maxmemory-policy", "noeviction");
                await server.ConfigSetAsync("maxmemory", "1");
                await Task.Delay(1000);
                await server.ConfigSetAsync("maxmemory", "0");
            });

            result.AssertHeld(options.Budget);
        }
        finally
        {
            await server.ConfigSetAsync("maxmemory", "0");
        }
    }

    [Fact]
    public async Task WaitAsync_RedisPausedLongerThanALease_OtherProcessGetsNoPermitWhileItemsRun()
    {
        // A holds the whole budget with two long items; the pause (2 s) outlives the lease (1 s). B keeps asking, as a
        // worker service would, through the pause and after. B must not get a permit while A's items still run.
        var options = Options(budget: 2, leaseTime: TimeSpan.FromSeconds(1));
        await using var connectionA = await redis.Connect(BacklogPolicy.FailFast, timeoutMs: 300);
        await using var connectionB = await redis.Connect(BacklogPolicy.FailFast, timeoutMs: 300);
        await using var a = RedisConcurrencyLimit.Create(connectionA, options);
        await using var b = RedisConcurrencyLimit.Create(connectionB, options);
        await FirstPermit.TakeAsync(a);
        Assert.True(await a.WaitAsync(CancellationToken.None).WaitAsync(s_guard));
        var itemsEnd = DateTime.UtcNow + TimeSpan.FromSeconds(4);

        using var stop = new CancellationTokenSource();
        var grantedWhileHeld = 0;
        var asking = Task.Run(async () =>
        {
            while (!stop.IsCancellationRequested)
            {
                try
                {
                    if (await b.WaitAsync(stop.Token))
                    {
                        if (DateTime.UtcNow < itemsEnd - TimeSpan.FromMilliseconds(50))
                        {
                            Interlocked.Increment(ref grantedWhileHeld);
                        }

                        b.Release();
                        await Task.Delay(5);
                    }
                }
                catch (RedisLimitUnavailableException)
                {
                    await Task.Delay(20);
                }
            }
        });

        await Task.Delay(200);
        await redis.PauseAsync(TimeSpan.FromSeconds(2));
        await Task.Delay(itemsEnd - DateTime.UtcNow);
        a.Release();
        a.Release();
        await Task.Delay(500);
        await stop.CancelAsync();
        await asking.WaitAsync(s_guard);

        Assert.Equal(0, grantedWhileHeld);
    }

    /// <summary>Runs two FanOutAsync calls of <paramref name="items"/> each (about 2 s of work), one per limit, injecting <paramref name="fault"/> once items run.</summary>
    private async Task<FleetRun> RunTwoAsync(RedisLimitOptions options, int items, Func<Task> fault)
    {
        // Commands time out (300 ms) well within the faults, on one connection that fails fast and one with the default backlog.
        await using var first = await redis.Connect(BacklogPolicy.FailFast, timeoutMs: 300);
        await using var second = await redis.Connect(BacklogPolicy.Default, timeoutMs: 300);
        await using var a = RedisConcurrencyLimit.Create(first, options);
        await using var b = RedisConcurrencyLimit.Create(second, options);
        var run = new FleetRun(2 * items);

        async Task<Exception?> Run(RedisConcurrencyLimit limit, int offset)
        {
            try
            {
                await Enumerable.Range(offset, items).FanOutAsync(run.BodyAsync, new FanOutOptions { Limit = limit });
                return null;
            }
            catch (Exception e)
            {
                return e;
            }
        }

        var runs = new[] { Run(a, 0), Run(b, items) };

        // The fault comes once both runs are under way (a cold first acquisition may take longer than a fixed delay).
        await Eventually.TrueAsync(() => Task.FromResult(run.Started >= 4 * options.Budget || runs.All(r => r.IsCompleted)), "items started", s_guard);
        await fault();
        var outcomes = await Task.WhenAll(runs).WaitAsync(s_guard);
        run.Outcomes = [(0, outcomes[0]), (items, outcomes[1])];
        run.Items = items;
        return run;
    }

    private static RedisLimitOptions Options(int budget, TimeSpan leaseTime) => new()
    {
        Key = $"test-{Guid.NewGuid():N}",
        Budget = budget,
        BatchSize = 2,
        LeaseTime = leaseTime,
        PollInterval = TimeSpan.FromMilliseconds(50),
    };

    /// <summary>What ran: how many times each item started, and the most items running at once across both limits.</summary>
    private sealed class FleetRun(int items)
    {
        private readonly int[] _starts = new int[items];
        private int _running;
        private int _peak;

        public (int Offset, Exception? Failure)[] Outcomes { get; set; } = [];

        public int Items { get; set; }

        public int Started
        {
            get
            {
                var started = 0;
                for (var i = 0; i < _starts.Length; i++)
                {
                    started += Volatile.Read(ref _starts[i]) > 0 ? 1 : 0;
                }

                return started;
            }
        }

        public async ValueTask BodyAsync(int item, CancellationToken cancellationToken)
        {
            Interlocked.Increment(ref _starts[item]);
            var now = Interlocked.Increment(ref _running);
            var seen = Volatile.Read(ref _peak);
            while (now > seen && Interlocked.CompareExchange(ref _peak, now, seen) != seen)
            {
                seen = Volatile.Read(ref _peak);
            }

            // Not canceled with the run: an item that started always ends, so the peak counts whole items.
            await Task.Delay(10, CancellationToken.None);
            Interlocked.Decrement(ref _running);
        }

        public void AssertHeld(int budget)
        {
            Assert.InRange(Volatile.Read(ref _peak), 1, budget);
            Assert.All(_starts, starts => Assert.InRange(starts, 0, 1));
            foreach (var (offset, failure) in Outcomes)
            {
                if (failure is null)
                {
                    Assert.All(_starts.AsSpan(offset, Items).ToArray(), starts => Assert.Equal(1, starts));
                }
                else
                {
                    Assert.True(IsUnavailable(failure), $"A run failed with something else than the documented exception: {failure}");
                }
            }
        }

        private static bool IsUnavailable(Exception failure) => failure switch
        {
            RedisLimitUnavailableException => true,
            AggregateException aggregate => aggregate.InnerExceptions.All(IsUnavailable),
            _ => false,
        };
    }
}
