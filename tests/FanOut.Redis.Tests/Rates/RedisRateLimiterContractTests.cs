using System.Threading.RateLimiting;

using FanOut.Limits.Contract;
using FanOut.Redis.Tests.Infrastructure;

namespace FanOut.Redis.Tests.Rates;

/// <summary>
/// The fleet rate against every limiter's contract, on a real redis-server: one permit per ten minutes, so once it is taken
/// the next acquisition holds a reserved slot far ahead and waits. Where it differs from a local limiter by design
/// (AttemptAcquire grants no permits without a round trip, IdleDuration is null, no permits are "available" locally) is in
/// docs/redis-limit.md and tested in <see cref="RedisRateLimiterTests"/>.
/// </summary>
public sealed class RedisRateLimiterContractTests(RedisServer redis) : RateLimiterContract, IClassFixture<RedisServer>
{
    internal static RedisRateLimiterOptions OnePermitPerTenMinutes() => new()
    {
        Key = $"contract-{Guid.NewGuid():N}",
        PermitLimit = 1,
        Window = TimeSpan.FromMinutes(10),
        ReservationHorizon = TimeSpan.FromHours(1),
    };

    protected override RateLimiter CreateOfOnePermit() => RedisRateLimiter.Create(redis.Connection, OnePermitPerTenMinutes());

    protected override async Task<RateLimitLease> TakeTheOnlyPermitAsync(RateLimiter limiter) => await limiter.AcquireAsync(1).AsTask().WaitAsync(Guard);
}

/// <summary>One partition of <see cref="RedisRateLimiter.CreatePartitioned"/> against the same contract, through <see cref="OnePartition"/>.</summary>
public sealed class RedisPartitionedRateLimiterContractTests(RedisServer redis) : RateLimiterContract, IClassFixture<RedisServer>
{
    protected override RateLimiter CreateOfOnePermit() =>
        new OnePartition(RedisRateLimiter.CreatePartitioned<string>(redis.Connection, tenant => tenant, RedisRateLimiterContractTests.OnePermitPerTenMinutes()), "tenant-a");

    protected override async Task<RateLimitLease> TakeTheOnlyPermitAsync(RateLimiter limiter) => await limiter.AcquireAsync(1).AsTask().WaitAsync(Guard);

    /// <summary>A partitioned limiter seen as the <see cref="RateLimiter"/> of one resource; disposing it disposes the partitioned one.</summary>
    private sealed class OnePartition(PartitionedRateLimiter<string> limiter, string resource) : RateLimiter
    {
        public override TimeSpan? IdleDuration => null;

        public override RateLimiterStatistics? GetStatistics() => limiter.GetStatistics(resource);

        protected override RateLimitLease AttemptAcquireCore(int permitCount) => limiter.AttemptAcquire(resource, permitCount);

        protected override ValueTask<RateLimitLease> AcquireAsyncCore(int permitCount, CancellationToken cancellationToken) =>
            limiter.AcquireAsync(resource, permitCount, cancellationToken);

        protected override void Dispose(bool disposing)
        {
            limiter.Dispose();
            base.Dispose(disposing);
        }

        protected override async ValueTask DisposeAsyncCore() => await limiter.DisposeAsync();
    }
}
