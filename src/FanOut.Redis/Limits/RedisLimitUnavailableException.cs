namespace FanOut.Redis;

/// <summary>Thrown by an acquisition of a <see cref="RedisConcurrencyLimit"/> that could not reach Redis under <see cref="RedisUnavailablePolicy.Fail"/>.</summary>
public sealed class RedisLimitUnavailableException : Exception
{
    /// <summary>Creates the exception with no message.</summary>
    public RedisLimitUnavailableException()
    {
    }

    /// <summary>Creates the exception with <paramref name="message"/>.</summary>
    public RedisLimitUnavailableException(string message)
        : base(message)
    {
    }

    /// <summary>Creates the exception with <paramref name="message"/> and the Redis error that caused it.</summary>
    public RedisLimitUnavailableException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
