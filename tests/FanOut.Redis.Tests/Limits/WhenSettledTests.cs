using FanOut.Redis.Tests.Infrastructure;

using Microsoft.Extensions.Time.Testing;

namespace FanOut.Redis.Tests.Limits;

/// <summary>
/// <see cref="RedisConcurrencyLimit.WhenAllSettledAsync"/> through the public surface: once two limits on one key have
/// settled, everything a release started has happened in both (a loop woken, a round trip, a message, another loop's round
/// trip), without the clock moving and without waiting for any clock.
/// </summary>
public sealed class WhenSettledTests(RedisServer redis) : IClassFixture<RedisServer>
{
    private static readonly TimeSpan s_guard = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task WhenAllSettledAsync_AfterAReleaseAnotherLimitWaitsFor_ItsWaiterHasTheLease()
    {
        var clock = new FakeTimeProvider();
        var options = new RedisLimitOptions
        {
            Key = await redis.FreshKeyAsync("settled"),
            Budget = 1,
            Linger = TimeSpan.Zero, // a released lease goes back at once: nothing below needs the clock
            PollInterval = TimeSpan.FromSeconds(1),
            TimeProvider = clock,
        };
        await using var holder = RedisConcurrencyLimit.Create(redis.Connection, options);
        await using var other = await redis.Connect();
        await using var waiter = RedisConcurrencyLimit.Create(other, options);
        RedisConcurrencyLimit[] fleet = [holder, waiter];

        for (var round = 0; round < 20; round++)
        {
            // The budget of 1 is held: the waiter's loop asks, is refused, and sleeps until a release or its poll.
            var (from, to) = round % 2 == 0 ? (holder, waiter) : (waiter, holder);
            if (round == 0)
            {
                Assert.True(await from.WaitAsync().WaitAsync(s_guard));
            }

            var waiting = to.WaitAsync();
            await RedisConcurrencyLimit.WhenAllSettledAsync(fleet).WaitAsync(s_guard);
            Assert.True(to.InFlight == 0 && !waiting.IsCompleted, $"round {round}: granted while the budget was held");

            // The release: the holder's return loop releases the lease, Redis publishes it, the waiter's subscription wakes
            // its acquire loop, which leases it and grants it. Settled means all of that has happened: the waiter's permit
            // is counted now. (The task WaitAsync returned completes a continuation later: it is the caller's side.)
            from.Release();
            await RedisConcurrencyLimit.WhenAllSettledAsync(fleet).WaitAsync(s_guard);
            Assert.True(to.InFlight == 1 && to.LeasesHeld == 1, $"round {round}: the waiter was not granted once both limits had settled (in flight {to.InFlight}, leases {to.LeasesHeld})");
            Assert.Equal(0, from.LeasesHeld);
            Assert.True(await waiting.WaitAsync(s_guard));
        }

        Assert.Equal(TimeSpan.Zero, clock.GetUtcNow() - clock.Start);
    }
}
