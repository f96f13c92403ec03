using FanOut.Redis.Diagnostics;
using FanOut.Redis.Leases;

namespace FanOut.Redis;

/// <summary>Applies <see cref="RedisLimitOptions.WhenUnavailable"/> when an acquisition round could not get an answer from Redis.</summary>
internal sealed class UnavailableHandler(RedisLimitOptions options, LocalLeases leases, LeaseClient client, RedisLimitTelemetry telemetry)
{
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
            leases.GrantFallback(options.FallbackLimit);
        }
        else
        {
            leases.FailWaiters(RedisLimitUnavailableException.Create(options.Key, client.Endpoints, client.Timeout, failure));
        }
    }
}
