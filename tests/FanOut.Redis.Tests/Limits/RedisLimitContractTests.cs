using FanOut.Limits.Contract;
using FanOut.Redis.Tests.Infrastructure;

namespace FanOut.Redis.Tests.Limits;

/// <summary>The Redis limit, built on FanOut's public extension points only, passes the contract every limit passes (against a real redis-server).</summary>
public sealed class RedisLimitContractTests(RedisServer redis) : ConcurrencyLimitContract, IClassFixture<RedisServer>
{
    protected override async ValueTask<ConcurrencyLimit> CreateAsync(int capacity) =>
        RedisConcurrencyLimit.Create(redis.Connection, new RedisLimitOptions
        {
            Key = await redis.FreshKeyAsync("contract"),
            Budget = capacity,
            BatchSize = Math.Min(capacity, 4),
            // Nothing in the contract waits for a lease to expire: a long lease and a 5 s bound on a round trip keep a
            // loaded CI host's slow trip from failing a test about permits (a 2 s lease bounds a trip at 667 ms).
            LeaseTime = TimeSpan.FromSeconds(15),
            RedisTimeout = TimeSpan.FromSeconds(5),
        });
}
