namespace FanOut.Redis;

/// <summary>What a <see cref="RedisConcurrencyLimit"/> does when an acquisition cannot reach Redis.</summary>
public enum RedisUnavailablePolicy
{
    /// <summary>The acquisition throws <see cref="RedisLimitUnavailableException"/>, so the fan-out call fails (the default: never silently unbounded).</summary>
    Fail,

    /// <summary>
    /// Permits come from a local limit until Redis answers again: by default the fair share this process held when Redis
    /// last answered, at most <see cref="RedisLimitOptions.FallbackLimit"/> (so the fleet holds about its budget: less than
    /// budget + processes); with <see cref="RedisLimitOptions.FallbackAtLastShare"/> off, the fallback limit itself (up to
    /// processes x fallback limit).
    /// </summary>
    FallBackToLocal,
}
