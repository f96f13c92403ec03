using System.Globalization;

using StackExchange.Redis;

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

    /// <summary>The one-line exception an acquisition gets: the endpoint, why, and the policy to choose.</summary>
    internal static RedisLimitUnavailableException Create(string key, string endpoints, TimeSpan timeout, Exception cause)
    {
        var reason = cause switch
        {
            RedisTimeoutException => "no answer before the connection's own timeout",
            TimeoutException => string.Create(CultureInfo.InvariantCulture, $"no answer within {timeout.TotalMilliseconds:0} ms"),
            RedisConnectionException connection => $"connection failed: {connection.FailureType}",
            RedisServerException server => $"refused: {Shorten(server.Message)}",
            ObjectDisposedException => "its connection was disposed",
            _ => $"{cause.GetType().Name}: {Shorten(cause.Message)}",
        };
        return new RedisLimitUnavailableException(
            $"Redis at {endpoints} is unavailable to the concurrency limit '{key}' ({reason}). " +
            $"With WhenUnavailable = {RedisUnavailablePolicy.Fail} no permit is handed out without Redis; " +
            $"choose WhenUnavailable = {RedisUnavailablePolicy.FallBackToLocal} and a FallbackLimit to run on a local limit meanwhile.",
            cause);
    }

    private static string Shorten(string message)
    {
        var line = message.AsSpan();
        var end = line.IndexOfAny('\r', '\n');
        if (end >= 0)
        {
            line = line[..end];
        }

        return line.Length <= 120 ? line.ToString() : string.Concat(line[..120], "...");
    }
}
