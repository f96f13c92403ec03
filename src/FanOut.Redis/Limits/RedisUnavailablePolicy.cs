namespace FanOut.Redis;

/// <summary>What a <see cref="RedisConcurrencyLimit"/> does when an acquisition cannot reach Redis.</summary>
public enum RedisUnavailablePolicy
{
    /// <summary>The acquisition throws <see cref="RedisLimitUnavailableException"/>, so the fan-out call fails (the default: never silently unbounded).</summary>
    Fail,

    /// <summary>
    /// Permits come from a local limit of <see cref="RedisLimitOptions.FallbackLimit"/> per process until Redis answers again;
    /// the fleet may then hold up to processes x fallback limit.
    /// </summary>
    FallBackToLocal,
}
