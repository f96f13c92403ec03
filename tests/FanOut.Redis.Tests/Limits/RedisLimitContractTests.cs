using FanOut.Limits.Contract;
using FanOut.Redis.Tests.Infrastructure;

namespace FanOut.Redis.Tests.Limits;

/// <summary>The Redis limit, built on FanOut's public extension points only, passes the contract every limit passes (against a real redis-server).</summary>
public sealed class RedisLimitContractTests(RedisServer redis) : ConcurrencyLimitContract, IClassFixture<RedisServer>
{
    protected override ValueTask<ConcurrencyLimit> CreateAsync(int capacity) =>
        new(RedisConcurrencyLimit.Create(redis.Connection, new RedisLimitOptions
        {
            Key = $"contract-{Guid.NewGuid():N}",
            Budget = capacity,
            BatchSize = Math.Min(capacity, 4),
            LeaseTime = TimeSpan.FromSeconds(2),
        }));
}
