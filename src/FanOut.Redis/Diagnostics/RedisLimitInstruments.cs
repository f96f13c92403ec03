namespace FanOut.Redis.Diagnostics;

/// <summary>
/// Names of the instruments a <see cref="RedisConcurrencyLimit"/> publishes on the FanOut meter
/// (<see cref="FanOut.Diagnostics.FanOutInstruments.MeterName"/>). Every measurement carries the tags
/// <c>fanout.limit.kind</c> = <c>redis</c> and <see cref="KeyTag"/>.
/// </summary>
public static class RedisLimitInstruments
{
    /// <summary>Up-down counter of leases this process holds (busy and idle).</summary>
    public const string LeasesHeld = "fanout.redis.leases.held";

    /// <summary>Gauge of leases held fleet-wide, recorded from every script's answer.</summary>
    public const string FleetInUse = "fanout.redis.fleet.in_use";

    /// <summary>Histogram of the time a worker waited for a permit that no idle lease here could serve, in seconds.</summary>
    public const string WaitDuration = "fanout.redis.wait.duration";

    /// <summary>Counter of lease renewals (heartbeats), one per lease renewed or re-added.</summary>
    public const string Renewals = "fanout.redis.lease.renewals";

    /// <summary>Counter of expired leases this process's scripts purged: permits of crashed or partitioned processes coming back.</summary>
    public const string Expiries = "fanout.redis.lease.expiries";

    /// <summary>Counter of this process's leases that were gone at renewal and could not be re-added (the budget was full).</summary>
    public const string Lost = "fanout.redis.lease.lost";

    /// <summary>Counter of acquisition or renewal rounds that could not reach Redis (an acquisition then failed, or was served by the local fallback).</summary>
    public const string Unavailable = "fanout.redis.unavailable";

    /// <summary>Tag naming the budget's <see cref="RedisLimitOptions.Key"/>.</summary>
    public const string KeyTag = "fanout.redis.key";
}
