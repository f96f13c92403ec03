using FanOut.Redis.Adaptive;
using FanOut.Redis.Leases;
using FanOut.Redis.Tests.Infrastructure;

namespace FanOut.Redis.Tests.Adaptive;

/// <summary>The adaptive budget's script against a real redis-server: the control law's rules, one request at a time.</summary>
public sealed class BudgetScriptTests(RedisServer redis) : IClassFixture<RedisServer>
{
    private const double Ratio = 0.9;

    /// <summary>A window of a minute: the tests move the last decrease and growth back in Redis's own clock instead of waiting for one.</summary>
    private const long Window = 60_000;

    [Fact]
    public async Task Adapt_OverloadsOfOneGeneration_DecreaseOnce()
    {
        var store = Store(initial: 16);

        var first = await store.AdaptAsync(Overload(generation: 0));
        var second = await store.AdaptAsync(Overload(generation: 0));

        // Slow start ends at two thirds of the budget (no leases in use to say more); the same burst again changes nothing.
        Assert.Equal(new BudgetReply(10, 1, 0, true), first);
        Assert.Equal(new BudgetReply(10, 1, 0, false), second);
        Assert.Equal(new BudgetReply(9, 2, 0, true), await store.AdaptAsync(Overload(generation: 1)));
    }

    [Fact]
    public async Task Adapt_OverloadWithinAWindowOfTheLastDecrease_Waits()
    {
        var store = Store(initial: 16);
        await store.AdaptAsync(Overload(generation: 0));

        var reply = await store.AdaptAsync(Overload(generation: 1) with { WindowMs = 60_000 });

        Assert.Equal(new BudgetReply(10, 1, 0, false), reply);
    }

    [Fact]
    public async Task Adapt_Growth_NeedsLeasesInUseNearTheBudget()
    {
        var store = Store(initial: 8);
        Assert.Equal(new BudgetReply(8, 0, 0, false), await store.AdaptAsync(Growth()));

        var acquired = await store.AcquireAsync(await Registered(store), Ids(7));

        Assert.Equal(7, acquired.Granted);
        Assert.Equal(new BudgetReply(12, 0, 0, true), await store.AdaptAsync(Growth())); // slow start grows by half
        Assert.Equal(new BudgetReply(8, 1, 0, true), await store.AdaptAsync(Overload(generation: 0))); // 2/3 of 12
        Assert.Equal(new BudgetReply(9, 1, 0, true), await store.AdaptAsync(Growth())); // then one at a time
    }

    [Fact]
    public async Task Adapt_FirstOverloadWithTheWholeBudgetInUse_GoesBackToTheLastBudgetUsedWithoutOverload()
    {
        // Slow start grew 8 -> 12 and the fleet sent 12: the overload says 12 is too many, and 8 was used without one.
        var store = Store(initial: 12);
        Assert.Equal(12, (await store.AcquireAsync(await Registered(store), Ids(12))).Granted);

        Assert.Equal(new BudgetReply(8, 1, 0, true), await store.AdaptAsync(Overload(generation: 0))); // not 0.9 x 12 = 10
    }

    [Fact]
    public async Task Adapt_OverloadSeenBeforeAGrowthItCrossed_IsCutFromTheBudgetItWasSeenAt()
    {
        // One process grew the fleet 6 -> 9 while another's overload at 6 was on its way: the cut is from 6, not from 9.
        var store = Store(initial: 9);
        Assert.Equal(new BudgetReply(4, 1, 0, true), await store.AdaptAsync(Overload(generation: 0) with { SeenBudget = 6 }));
        Assert.Equal(new BudgetReply(3, 2, 0, true), await store.AdaptAsync(Overload(generation: 1) with { SeenBudget = 4 })); // 0.9 x 4

        // A process that saw a higher budget than the script holds (a decrease it had not learned) changes nothing of the rule.
        Assert.Equal(new BudgetReply(2, 3, 0, true), await store.AdaptAsync(Overload(generation: 2) with { SeenBudget = 20 }));
    }

    [Fact]
    public async Task Adapt_BudgetBounds_NeverBelowMinNorAboveMax()
    {
        var store = Store(initial: 2, min: 2, max: 3);
        Assert.Equal(2, (await store.AdaptAsync(Overload(generation: 0))).Budget);
        var ids = Ids(2);
        var acquired = await store.AcquireAsync(await Registered(store), ids);
        Assert.Equal(2, acquired.Granted);
        Assert.Equal(3, (await store.AdaptAsync(Growth())).Budget);
        Assert.Equal(1, (await store.AcquireAsync(acquired.Epoch, Ids(1))).Granted);
        Assert.Equal(new BudgetReply(3, 1, 0, false), await store.AdaptAsync(Growth()));
    }

    [Fact]
    public async Task Acquire_WhileTheFleetIsPaused_GrantsNothingThenResumes()
    {
        var store = Store(initial: 4);
        var paused = await store.AdaptAsync(Overload(generation: -1) with { PauseMs = 500 });
        Assert.Equal(4, paused.Budget); // a pause alone does not cut the budget
        Assert.InRange(paused.PausedMs, 1, 500);

        var first = await store.AcquireAsync(await Registered(store), Ids(1));
        var during = await store.AcquireAsync(first.Epoch, Ids(1));

        Assert.Equal(0, during.Granted);
        Assert.InRange(during.Fleet.PausedMs, 1, 500);
        await Eventually.TrueAsync(async () => (await store.AcquireAsync(first.Epoch, Ids(1))).Granted == 1, "the pause ended by the server's clock");
    }

    [Fact]
    public async Task Adapt_GrowthBackToARejectedLevel_WaitsTheSpacingWhichDoublesWhenTheProbeIsRejected()
    {
        // The core law's spaced probing: against a hard cap the budget goes back up to the level that was rejected only
        // every few windows, not every window. The test never waits for a window (a minute): it moves the last decrease
        // and growth back in Redis's own clock instead.
        var (store, budgetKey, database) = await PastSlowStartUsingTenAsync();
        Task<BudgetReply> GrowAfter(double windowsSinceDecrease, double windowsSinceGrowth = 10) => GrowAfterAsync(store, budgetKey, windowsSinceDecrease, windowsSinceGrowth);

        Assert.Equal(new BudgetReply(9, 1, 0, true), await store.AdaptAsync(Overload(generation: 0))); // 10 rejected
        Assert.Equal(new BudgetReply(9, 1, 0, false), await GrowAfter(1.5)); // a window is not enough to probe 10 again
        Assert.Equal(new BudgetReply(10, 1, 0, true), await GrowAfter(2.5)); // two are: the probe

        Assert.Equal(new BudgetReply(9, 2, 0, true), await store.AdaptAsync(Overload(generation: 1))); // the probe rejected
        Assert.Equal(new BudgetReply(9, 2, 0, false), await GrowAfter(3.5)); // now four windows
        Assert.Equal(new BudgetReply(10, 2, 0, true), await GrowAfter(4.5));

        // A window after the probe without a decrease: it passed, the level is forgotten and growth goes on one a window.
        Assert.Equal(new BudgetReply(11, 2, 0, true), await GrowAfter(10, windowsSinceGrowth: 1.5));
        Assert.Equal(0, (long)await database.HashGetAsync(budgetKey, "l"));
        Assert.Equal(2, (long)await database.HashGetAsync(budgetKey, "k"));
    }

    [Fact]
    public async Task Adapt_ProbesNoWithARetryAfter_DecreasesWithoutPausingTheFleet()
    {
        // A cap whose every 429 carries "Retry-After: 1": the "no" to a probe is the one the probe asked for (docs/adaptive.md,
        // rule 6). A "no" that is not a probe's pauses, and so does a second "no" of the probe's burst.
        var (store, budgetKey, database) = await PastSlowStartUsingTenAsync();

        var first = await store.AdaptAsync(Overload(generation: 0) with { PauseMs = 1000 }); // 10 rejected: not a probe
        Assert.Equal((9, 1, true), (first.Budget, first.Generation, first.Changed));
        Assert.InRange(first.PausedMs, 1, 1000);
        await database.HashSetAsync(budgetKey, "p", 0); // the pause over
        Assert.Equal(new BudgetReply(10, 1, 0, true), await GrowAfterAsync(store, budgetKey, 3)); // the probe

        Assert.Equal(new BudgetReply(9, 2, 0, true), await store.AdaptAsync(Overload(generation: 1) with { PauseMs = 1000, WindowMs = Window }));
        var second = await store.AdaptAsync(Overload(generation: 1) with { PauseMs = 1000, WindowMs = Window });
        Assert.Equal((9, 2, true), (second.Budget, second.Generation, second.Changed));
        Assert.InRange(second.PausedMs, 1, 1000);
    }

    /// <summary>A fleet past slow start at a budget of 10, all of it in use as leases.</summary>
    private async Task<(LeaseStore Store, string BudgetKey, StackExchange.Redis.IDatabase Database)> PastSlowStartUsingTenAsync()
    {
        var store = Store(initial: 10);
        var budgetKey = store.LeasesKey.ToString().Replace(":leases", ":budget", StringComparison.Ordinal);
        var database = redis.Connection.GetDatabase();
        await database.HashSetAsync(budgetKey, [new("b", 10), new("g", 0), new("s", 0)]); // past slow start
        Assert.Equal(10, (await store.AcquireAsync(await Registered(store), Ids(10))).Granted); // the fleet uses its budget
        return (store, budgetKey, database);
    }

    /// <summary>Asks growth as if the last decrease and the last growth were that many windows ago.</summary>
    private async Task<BudgetReply> GrowAfterAsync(LeaseStore store, string budgetKey, double windowsSinceDecrease, double windowsSinceGrowth = 10)
    {
        var database = redis.Connection.GetDatabase();
        var now = await ServerMilliseconds(database);
        await database.HashSetAsync(budgetKey, [new("d", now - (long)(windowsSinceDecrease * Window)), new("u", now - (long)(windowsSinceGrowth * Window))]);
        return await store.AdaptAsync(Growth() with { WindowMs = Window });
    }

    private static async Task<long> ServerMilliseconds(StackExchange.Redis.IDatabase database)
    {
        var time = (StackExchange.Redis.RedisResult[])(await database.ExecuteAsync("TIME"))!;
        return ((long)time[0] * 1000) + ((long)time[1] / 1000);
    }

    private static BudgetRequest Overload(long generation) => new(true, generation, 0, 0, Ratio);

    private static BudgetRequest Growth() => new(false, 0, 0, 0, Ratio);

    /// <summary>
    /// An epoch the store's key already has, as a client that has used it holds: a first client on this young server would
    /// otherwise create the epoch and wait out the restart grace (docs/redis-limit.md) before anything is granted.
    /// </summary>
    private async Task<string> Registered(LeaseStore store)
    {
        var epochKey = store.LeasesKey.ToString().Replace(":leases", ":epoch", StringComparison.Ordinal);
        await redis.Connection.GetDatabase().StringSetAsync(epochKey, "test");
        return "test";
    }

    private static string[] Ids(int count) => Enumerable.Range(0, count).Select(_ => Guid.NewGuid().ToString("N")).ToArray();

    private LeaseStore Store(int initial, int min = 1, int max = 256) => new(
        redis.Connection.GetDatabase(),
        new RedisLimitOptions { Key = $"test-{Guid.NewGuid():N}", Adaptive = new AdaptiveBudgetOptions { MinBudget = min, MaxBudget = max, InitialBudget = initial } },
        $"client-{Guid.NewGuid():N}");
}
