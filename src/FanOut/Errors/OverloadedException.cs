namespace FanOut;

/// <summary>
/// Thrown by a body to say "the downstream is overloaded; this item was not processed": with an adaptive limit the limit
/// backs off and the item runs again later (see <see cref="FanOutOptions.OverloadRetries"/>), after
/// <see cref="RetryAfter"/> when given.
/// </summary>
public class OverloadedException : Exception
{
    /// <summary>Creates the exception without a retry-after hint.</summary>
    public OverloadedException()
        : this(message: null)
    {
    }

    /// <summary>Creates the exception with a message.</summary>
    /// <param name="message">What the downstream said.</param>
    public OverloadedException(string? message)
        : this(message, retryAfter: null, innerException: null)
    {
    }

    /// <summary>Creates the exception with a message and the downstream's own exception.</summary>
    /// <param name="message">What the downstream said.</param>
    /// <param name="innerException">The downstream's exception.</param>
    public OverloadedException(string? message, Exception? innerException)
        : this(message, retryAfter: null, innerException)
    {
    }

    /// <summary>Creates the exception with the downstream's retry-after hint.</summary>
    /// <param name="message">What the downstream said.</param>
    /// <param name="retryAfter">How long the downstream asked callers to wait (HTTP <c>Retry-After</c>); <see langword="null"/> when it did not say.</param>
    /// <param name="innerException">The downstream's exception, if any.</param>
    public OverloadedException(string? message, TimeSpan? retryAfter, Exception? innerException = null)
        : base(message ?? "The downstream is overloaded.", innerException)
    {
        if (retryAfter is { } hint)
        {
            ArgumentOutOfRangeException.ThrowIfLessThan(hint, TimeSpan.Zero, nameof(retryAfter));
        }

        RetryAfter = retryAfter;
    }

    /// <summary>How long the downstream asked callers to wait before the next attempt; <see langword="null"/> when it did not say.</summary>
    public TimeSpan? RetryAfter { get; }

    /// <summary>
    /// The retry-after hint that <paramref name="failure"/> carries, read as a fan-out call reads it: an
    /// <see cref="OverloadedException"/> with <see cref="RetryAfter"/> anywhere in the chain of inner exceptions, or any
    /// exception's <see cref="Exception.Data"/> under <c>"Retry-After"</c> (a <see cref="TimeSpan"/>, a number of seconds, or
    /// the header's text: delta-seconds or an HTTP date, relative to <paramref name="now"/>). Hints of any size saturate at
    /// 365 days instead of overflowing. For limits of your own that honour the same hints.
    /// </summary>
    /// <param name="failure">What the item's body threw.</param>
    /// <param name="now">The current time, for an HTTP-date hint.</param>
    /// <returns>The hint, or <see langword="null"/> when the chain carries none.</returns>
    public static TimeSpan? FindRetryAfter(Exception failure, DateTimeOffset now)
    {
        ArgumentNullException.ThrowIfNull(failure);
        return Execution.RetryAfterHint.From(failure, now);
    }
}
