using FanOut.Redis.Tests.Infrastructure;

namespace FanOut.Redis.Tests.Adaptive;

/// <summary>The adaptive fleet budget through the limit's public surface: two limits on one key, as two processes would be.</summary>
public sealed class AdaptiveFleetTests(RedisServer redis) : IClassFixture<RedisServer>
{
    private static readonly TimeSpan s_guard = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task FanOutAsync_TwoLimitsAgainstACapacity_BudgetFindsItAndEveryItemSucceeds()
    {
        const int Capacity = 12;
        var options = await OptionsAsync();
        await using var first = RedisConcurrencyLimit.Create(redis.Connection, options);
        await using var second = RedisConcurrencyLimit.Create(redis.Connection, options);
        var running = 0;
        long calls = 0, rejected = 0;
        var budgets = new int[3000];
        var sampled = 0;
        async ValueTask Body(int item, CancellationToken token)
        {
            if (item >= 1000)
            {
                // The budget as the last two thirds of the items see it: where the law settled, not its last step.
                var at = Interlocked.Increment(ref sampled) - 1;
                if (at < budgets.Length)
                {
                    budgets[at] = first.Current;
                }
            }

            Interlocked.Increment(ref calls);
            if (Interlocked.Increment(ref running) > Capacity)
            {
                // A downstream with no queue: beyond its capacity it answers "overloaded" at once.
                Interlocked.Decrement(ref running);
                Interlocked.Increment(ref rejected);
                throw new OverloadedException("capacity");
            }

            try
            {
                await Task.Delay(3, token);
            }
            finally
            {
                Interlocked.Decrement(ref running);
            }
        }

        var fanOut = new FanOutOptions { OverloadRetries = 100 };
        await Task.WhenAll(
            Enumerable.Range(0, 1500).FanOutAsync(Body, fanOut with { Limit = first }),
            Enumerable.Range(0, 1500).FanOutAsync(Body, fanOut with { Limit = second })).WaitAsync(s_guard);

        // Without growth the budget would stay at its initial 2; without decreases it would climb to 256 and most calls
        // would be rejected. The bounds are loose, and on the median the items saw rather than the last value: the law's
        // sawtooth (and a decrease at the very end, where one call finishes first) decides where a single reading lands.
        var settled = budgets.Take(Math.Min(sampled, budgets.Length)).Order().ElementAt(Math.Min(sampled, budgets.Length) / 2);
        var seen = $"budget {first.Current} at the end, median {settled} over the last two thirds (peak {first.Peak}), {rejected} of {calls} calls rejected";
        Assert.True(settled >= Capacity / 2 && settled <= Capacity * 2, seen);
        Assert.True(first.Peak >= Capacity && first.Peak <= 256, seen);
        Assert.True(rejected >= 1 && rejected <= calls / 5, seen);
        Assert.Equal(3000, calls - rejected);
    }

    [Fact]
    public async Task Overload_SeenByOneProcess_ShrinksTheOthersBudget()
    {
        var options = await OptionsAsync() with { Adaptive = new AdaptiveBudgetOptions { InitialBudget = 20 } };
        await using var seer = RedisConcurrencyLimit.Create(redis.Connection, options);
        await using var other = RedisConcurrencyLimit.Create(redis.Connection, options);
        Assert.True(await seer.WaitAsync().WaitAsync(s_guard));
        Assert.True(await other.WaitAsync().WaitAsync(s_guard));
        Assert.Equal(20, other.Current);

        var start = seer.RecordStart();
        seer.RecordCompletion(start, ItemOutcome.Overloaded);

        await Eventually.TrueAsync(() => Task.FromResult(other.Current == 13), "the other process learned of the decrease"); // slow start ends at 2/3 of 20
        Assert.Equal(13, seer.Current);
        seer.Release();
        other.Release();
    }

    /// <summary>
    /// A Retry-After reaches the fleet pause by one path, the completion, whoever saw it: FanOut.Http's handler marks the
    /// lease (<see cref="ConcurrencyLease.MarkOverloaded(TimeSpan)"/>), a caller's own limit reports it, a fan-out call reads
    /// it from the body's exception. Before, only the last paused the fleet (the limit found hints in exceptions only).
    /// </summary>
    [Theory]
    [InlineData("lease")]
    [InlineData("hook")]
    [InlineData("loop")]
    public async Task RetryAfter_SeenByOneProcessFromAnySource_PausesEveryProcessThenResumes(string source)
    {
        var options = await OptionsAsync() with { Linger = TimeSpan.FromSeconds(1) };
        await using var seer = RedisConcurrencyLimit.Create(redis.Connection, options);
        await using var other = RedisConcurrencyLimit.Create(redis.Connection, options);
        Assert.True(await other.WaitAsync().WaitAsync(s_guard));
        other.Release(); // an idle lease here, taken without a round trip until the pause

        var hint = TimeSpan.FromMilliseconds(1500);
        var run = Task.CompletedTask;
        switch (source)
        {
            case "lease":
                using (var limiter = seer.AsRateLimiter())
                {
                    using var lease = await limiter.AcquireAsync().AsTask().WaitAsync(s_guard);
                    Assert.True(lease.IsAcquired);
                    ((ConcurrencyLease)lease).MarkOverloaded(hint); // what FanOutLimitHandler does on a 429 with Retry-After
                }

                break;
            case "hook":
                Assert.True(await seer.WaitAsync().WaitAsync(s_guard));
                seer.RecordCompletion(seer.RecordStart(), ItemOutcome.Overloaded, hint);
                seer.Release();
                break;
            default:
                var attempts = 0;
                run = new[] { 0 }.FanOutAsync(
                    (_, _) => Interlocked.Increment(ref attempts) == 1 ? throw new OverloadedException("slow down", hint) : ValueTask.CompletedTask,
                    new FanOutOptions { Limit = seer });
                break;
        }

        await Eventually.TrueAsync(() => Task.FromResult(other.FleetPaused), "the other process learned of the pause");
        Assert.False(other.TryAcquire());
        var waiting = other.WaitAsync();
        await Task.Delay(100);
        Assert.False(waiting.IsCompleted);
        Assert.True(await waiting.WaitAsync(s_guard));
        Assert.False(other.FleetPaused);
        other.Release();
        await run.WaitAsync(s_guard);
    }

    /// <summary>The options of both limits, on a key whose epoch exists (no restart grace: a 15 s lease cost the class's first test 14 s).</summary>
    private async Task<RedisLimitOptions> OptionsAsync() => new()
    {
        Key = await redis.FreshKeyAsync("test"),
        Adaptive = new AdaptiveBudgetOptions { InitialBudget = 2 },
        // Nothing here waits for a lease to expire; a long lease lets one round trip take up to RedisTimeout (5 s) on a
        // loaded CI host, where a 2 s lease capped it at 667 ms and a fresh connection's first script load missed that.
        LeaseTime = TimeSpan.FromSeconds(15),
        RedisTimeout = TimeSpan.FromSeconds(5),
        BatchSize = 2,
    };
}
