using FanOut.Redis.Adaptive;
using FanOut.Redis.Leases;
using FanOut.Redis.Tests.Infrastructure;

namespace FanOut.Redis.Tests.Adaptive;

/// <summary>The adaptive budget's script against a real redis-server: the fleet budget as the sum of the processes' claims, one request at a time.</summary>
public sealed class BudgetScriptTests(RedisServer redis) : IClassFixture<RedisServer>
{
    [Fact]
    public async Task Claim_Joins_GetTheInitialBudgetLessWhatTheOthersClaimAtLeastOne()
    {
        // The fleet's first contact is bounded by its initial budget, whatever the number of processes that start together.
        var key = Key();
        var first = Store(key, initial: 4);
        var second = Store(key, initial: 4);
        var third = Store(key, initial: 4);

        Assert.Equal(new BudgetReply(4, 0, 0, false, 4), await first.ClaimAsync(Join()));
        Assert.Equal(new BudgetReply(5, 0, 0, true, 1), await second.ClaimAsync(Join())); // at least one each
        Assert.Equal(new BudgetReply(6, 0, 0, true, 1), await third.ClaimAsync(Join()));
    }

    [Fact]
    public async Task Claim_TheBudgetIsTheSumOfTheClaims()
    {
        var key = Key();
        var first = Store(key, initial: 4);
        var second = Store(key, initial: 4);
        await first.ClaimAsync(Join());
        await second.ClaimAsync(Join());

        Assert.Equal(new BudgetReply(16, 0, 0, true, 12), await second.ClaimAsync(Claim(12))); // 4 + 12
        Assert.Equal(new BudgetReply(22, 0, 0, true, 10), await first.ClaimAsync(Claim(10)));
        Assert.Equal(new BudgetReply(19, 0, 0, true, 9), await second.ClaimAsync(Claim(9))); // a drain: the generation stays
        Assert.Equal(new BudgetReply(19, 0, 0, false, 9), await second.ClaimAsync(Claim(9))); // a refresh changes nothing
    }

    [Fact]
    public async Task Claim_ANoALawCutOn_RaisesTheGenerationOncePerGenerationAndWindow()
    {
        // The others back off when they learn of a new generation: processes that saw the same burst send the same one.
        var key = Key();
        var first = Store(key, initial: 4);
        var second = Store(key, initial: 4);
        await first.ClaimAsync(Join());

        Assert.Equal(new BudgetReply(3, 1, 0, true, 3), await first.ClaimAsync(new BudgetRequest(3, 0, OverloadGeneration: 0, WindowMs: 1)));
        Assert.Equal(new BudgetReply(5, 1, 0, true, 2), await second.ClaimAsync(new BudgetRequest(2, 0, OverloadGeneration: 0, WindowMs: 1))); // the same burst
        Assert.Equal(1, (await second.ClaimAsync(new BudgetRequest(2, 0, OverloadGeneration: 1, WindowMs: 60_000))).Generation); // within a window
        await Eventually.TrueAsync(async () => (await second.ClaimAsync(new BudgetRequest(2, 0, OverloadGeneration: 1, WindowMs: 1))).Generation == 2, "a window of 1 ms passed by the server's clock");
    }

    [Fact]
    public async Task Claim_AProcessThatLeaves_NoLongerCounts()
    {
        var key = Key();
        var first = Store(key, initial: 4);
        var second = Store(key, initial: 4);
        await first.ClaimAsync(Join());
        await second.ClaimAsync(Claim(6));

        Assert.Equal(new BudgetReply(4, 0, 0, true, 0), await second.ClaimAsync(new BudgetRequest(BudgetRequest.Withdraw, 0)));
    }

    [Fact]
    public async Task Claim_NotRefreshedForALeaseTime_Expires()
    {
        // A crashed process's claim goes with its leases: claims are dropped a lease time after they were last sent.
        var key = Key();
        var crashed = Store(key, initial: 4, leaseTime: TimeSpan.FromMilliseconds(200));
        var alive = Store(key, initial: 4);
        await crashed.ClaimAsync(Claim(20));
        Assert.Equal(23, (await alive.ClaimAsync(Claim(3))).Budget);

        await Eventually.TrueAsync(async () => (await alive.ClaimAsync(Claim(3))).Budget == 3, "the crashed process's claim expired by the server's clock");
    }

    [Fact]
    public async Task Claim_BudgetBounds_TheSumHeldToMinAndMaxAndEachClaimToMax()
    {
        var key = Key();
        var first = Store(key, initial: 2, min: 2, max: 10);
        var second = Store(key, initial: 2, min: 2, max: 10);

        Assert.Equal(new BudgetReply(2, 0, 0, false, 1), await first.ClaimAsync(Claim(1)));
        Assert.Equal(new BudgetReply(10, 0, 0, true, 10), await second.ClaimAsync(Claim(50)));
        Assert.Equal(new BudgetReply(10, 0, 0, false, 1), await first.ClaimAsync(Claim(1)));
    }

    [Fact]
    public async Task Acquire_WhileTheFleetIsPaused_GrantsNothingThenResumes()
    {
        var store = Store(Key(), initial: 4);
        var paused = await store.ClaimAsync(new BudgetRequest(BudgetRequest.Join, PauseMs: 500));
        Assert.Equal(4, paused.Budget); // a pause alone does not cut the budget
        Assert.InRange(paused.PausedMs, 1, 500);

        var first = await store.AcquireAsync(await Registered(store), Ids(1));
        var during = await store.AcquireAsync(first.Epoch, Ids(1));

        Assert.Equal(0, during.Granted);
        Assert.InRange(during.Fleet.PausedMs, 1, 500);
        await Eventually.TrueAsync(async () => (await store.AcquireAsync(first.Epoch, Ids(1))).Granted == 1, "the pause ended by the server's clock");
    }

    [Fact]
    public async Task Acquire_GrantsUpToTheSumOfTheClaims()
    {
        var key = Key();
        var first = Store(key, initial: 4);
        var second = Store(key, initial: 4);
        await first.ClaimAsync(Claim(3));
        await second.ClaimAsync(Claim(2));

        Assert.Equal(5, (await first.AcquireAsync(await Registered(first), Ids(8))).Granted);
    }

    private static BudgetRequest Join() => new(BudgetRequest.Join, 0);

    private static BudgetRequest Claim(int claim) => new(claim, 0);

    private static string Key() => $"test-{Guid.NewGuid():N}";

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

    private LeaseStore Store(string key, int initial, int min = 1, int max = 256, TimeSpan? leaseTime = null) => new(
        redis.Connection.GetDatabase(),
        new RedisLimitOptions { Key = key, Adaptive = new AdaptiveBudgetOptions { MinBudget = min, MaxBudget = max, InitialBudget = initial }, LeaseTime = leaseTime ?? TimeSpan.FromSeconds(15) },
        $"client-{Guid.NewGuid():N}");
}
