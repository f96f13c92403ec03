using FanOut.Redis.Adaptive;
using FanOut.Redis.Diagnostics;
using FanOut.Redis.Leases;
using FanOut.Redis.Tests.Infrastructure;

using Microsoft.Extensions.Time.Testing;

using StackExchange.Redis;

namespace FanOut.Redis.Tests.Adaptive;

/// <summary>
/// An adaptive budget (and a fleet pause) left in Redis by an earlier fleet, or published by a process with other options,
/// is held to the options of the process that reads it.
/// </summary>
public sealed class StoredBudgetTests(RedisServer redis) : IClassFixture<RedisServer>
{
    private static readonly TimeSpan s_guard = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task FanOutAsync_StoredBudgetAboveMaxBudget_RunsAtMostMaxBudgetAtOnce()
    {
        // An earlier fleet (MaxBudget 256) grew the budget to 12 and left it in Redis; this one allows at most 4.
        var options = Options() with { Adaptive = new AdaptiveBudgetOptions { MinBudget = 1, MaxBudget = 4, InitialBudget = 2 } };
        await Seed(options.Key, budget: 12);
        await using var limit = RedisConcurrencyLimit.Create(redis.Connection, options);
        var running = 0;
        var peak = 0;
        async ValueTask Body(int item, CancellationToken token)
        {
            InterlockedMax(ref peak, Interlocked.Increment(ref running));
            try
            {
                await Task.Delay(2, token);
            }
            finally
            {
                Interlocked.Decrement(ref running);
            }
        }

        await Enumerable.Range(0, 200).FanOutAsync(Body, new FanOutOptions { Limit = limit }).WaitAsync(s_guard);

        Assert.InRange(peak, 1, 4);
        Assert.InRange(limit.Current, 1, 4);
        Assert.InRange(limit.Peak, 1, 4);
    }

    [Fact]
    public async Task WaitAsync_StoredBudgetBelowMinBudget_GrantsMinBudget()
    {
        var options = Options() with { Adaptive = new AdaptiveBudgetOptions { MinBudget = 3, MaxBudget = 8, InitialBudget = 3 } };
        await Seed(options.Key, budget: 1);
        await using var limit = RedisConcurrencyLimit.Create(redis.Connection, options);

        for (var i = 0; i < 3; i++)
        {
            Assert.True(await limit.WaitAsync().WaitAsync(s_guard));
        }

        Assert.Equal(3, limit.Current);
        for (var i = 0; i < 3; i++)
        {
            limit.Release();
        }
    }

    [Fact]
    public async Task Adapt_StoredBudgetAboveMaxBudget_AnswersWithinTheReadersBounds()
    {
        var options = Options() with { Adaptive = new AdaptiveBudgetOptions { MinBudget = 1, MaxBudget = 4, InitialBudget = 2 } };
        await Seed(options.Key, budget: 12);
        var store = new LeaseStore(redis.Connection.GetDatabase(), options, $"client-{Guid.NewGuid():N}");

        var growth = await store.AdaptAsync(new BudgetRequest(false, 0, 0, 0, 0.9));
        var overload = await store.AdaptAsync(new BudgetRequest(true, 0, 0, 0, 0.9));

        Assert.InRange(growth.Budget, 1, 4);
        Assert.InRange(overload.Budget, 1, 3); // a decrease from the clamped 4, not from the stored 12
    }

    [Fact]
    public async Task Acquire_StoredPauseLongerThanMaxPause_IsHeldToMaxPause()
    {
        var options = Options() with { Adaptive = new AdaptiveBudgetOptions { InitialBudget = 2, MaxPause = TimeSpan.FromMilliseconds(300) } };
        var database = redis.Connection.GetDatabase();
        var now = await ServerMilliseconds(database);
        await database.HashSetAsync($"fanout:{{{options.Key}}}:budget", [new("b", 2), new("g", 0), new("s", 0), new("p", now + 3_600_000)]);
        var store = new LeaseStore(database, options, $"client-{Guid.NewGuid():N}");

        var reply = await store.AcquireAsync(string.Empty, ["a"]);

        Assert.InRange(reply.Fleet.PausedMs, 0, 300);
    }

    [Fact]
    public void ObserveBudget_PublishedBudgetOutsideTheOptions_IsHeldToThem()
    {
        var fleet = new FleetState(2, new FakeTimeProvider(), pause: null, new RedisLimitTelemetry("test"), minBudget: 2, maxBudget: 4);

        fleet.ObserveBudget(12, 0, 0);
        Assert.Equal(4, fleet.Budget);
        fleet.ObserveBudget(1, 1, 0);
        Assert.Equal(2, fleet.Budget);
        Assert.Equal(4, fleet.Peak);
    }

    private static RedisLimitOptions Options() => new()
    {
        Key = $"stored-{Guid.NewGuid():N}",
        Adaptive = new AdaptiveBudgetOptions(),
        LeaseTime = TimeSpan.FromSeconds(2),
        RedisTimeout = TimeSpan.FromMilliseconds(600),
        BatchSize = 4,
    };

    /// <summary>What an earlier fleet leaves behind: a budget past slow start, generation 0.</summary>
    private Task Seed(string key, int budget) =>
        redis.Connection.GetDatabase().HashSetAsync($"fanout:{{{key}}}:budget", [new("b", budget), new("g", 0), new("s", 0)]);

    private static async Task<long> ServerMilliseconds(IDatabase database)
    {
        var time = (RedisResult[])(await database.ExecuteAsync("TIME"))!;
        return ((long)time[0] * 1000) + ((long)time[1] / 1000);
    }

    private static void InterlockedMax(ref int target, int value)
    {
        var seen = Volatile.Read(ref target);
        while (value > seen)
        {
            var was = Interlocked.CompareExchange(ref target, value, seen);
            if (was == seen)
            {
                return;
            }

            seen = was;
        }
    }
}
