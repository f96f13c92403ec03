using FanOut.Redis.Diagnostics;
using FanOut.Redis.Leases;

namespace FanOut.Redis;

/// <summary>Applies <see cref="RedisLimitOptions.WhenUnavailable"/> when an acquisition round could not get an answer from Redis.</summary>
internal sealed class UnavailableHandler(RedisLimitOptions options, LocalLeases leases, LeaseClient client, FleetState fleet, RedisLimitTelemetry telemetry)
{
    /// <summary>
    /// The permits this process may hold on the fallback: its fair share when Redis last answered (see
    /// <see cref="RedisLimitOptions.FallbackAtLastShare"/>), at most <see cref="RedisLimitOptions.FallbackLimit"/>; that
    /// ceiling alone when it never reached Redis or the option is off.
    /// </summary>
    public int FallbackLimit => options.FallbackAtLastShare && fleet.LastShare > 0 ? Math.Min(options.FallbackLimit, fleet.LastShare) : options.FallbackLimit;

    /// <summary>A round failed with <paramref name="failure"/>: count it, and apply the policy.</summary>
    public void Handle(Exception failure)
    {
        telemetry.Unavailable();
        Apply(failure);
    }

    /// <summary>Fails the waiters with <see cref="RedisLimitUnavailableException"/>, or serves them from the fallback limit.</summary>
    public void Apply(Exception failure)
    {
        if (leases.WaiterCount == 0)
        {
            return;
        }

        if (options.WhenUnavailable == RedisUnavailablePolicy.FallBackToLocal)
        {
            leases.GrantFallback(FallbackLimit);
        }
        else
        {
            leases.FailWaiters(RedisLimitUnavailableException.Create(options.Key, client.Endpoints, client.Timeout, failure));
        }
    }
}
