using System.Globalization;

namespace FanOut.Redis.Adaptive;

/// <summary>Finds a downstream's retry-after hint in a failure's exception chain, as a fan-out call does.</summary>
/// <remarks>
/// The same places FanOut reads (docs/library.md): an <see cref="OverloadedException"/> with a
/// <see cref="OverloadedException.RetryAfter"/> anywhere in the chain, or any exception's <see cref="Exception.Data"/> under
/// <c>Retry-After</c>: a <see cref="TimeSpan"/>, a number of seconds, or the header's text (delta-seconds or an HTTP date).
/// </remarks>
internal static class RetryAfterReader
{
    /// <summary>The <see cref="Exception.Data"/> key read for a hint (the HTTP header's name).</summary>
    public const string DataKey = "Retry-After";

    /// <summary>The hint, or null when the chain carries none (or a negative one).</summary>
    public static TimeSpan? From(Exception failure, DateTimeOffset now)
    {
        for (var e = failure; e is not null; e = e.InnerException)
        {
            if (e is OverloadedException { RetryAfter: { } hint })
            {
                return hint < TimeSpan.Zero ? null : hint;
            }

            if (e.Data.Contains(DataKey) && Parse(e.Data[DataKey], now) is { } fromData)
            {
                return fromData;
            }
        }

        return null;
    }

    /// <summary>Any hint at or above this is read as this (the longest pause accepted is far shorter).</summary>
    private static readonly TimeSpan s_saturated = TimeSpan.FromDays(365);

    private static TimeSpan? Parse(object? value, DateTimeOffset now) => value switch
    {
        TimeSpan span when span >= TimeSpan.Zero => span,
        int seconds when seconds >= 0 => FromSeconds(seconds),
        long seconds when seconds >= 0 => FromSeconds(seconds),
        double seconds when seconds >= 0 => FromSeconds(seconds), // NaN fails the test: no hint
        DateTimeOffset at => Max(at - now),
        string text when double.TryParse(text, NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out var seconds) => FromSeconds(seconds),
        string text when DateTimeOffset.TryParseExact(text, "r", CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal, out var at) => Max(at - now),
        _ => null,
    };

    private static TimeSpan FromSeconds(double seconds) => seconds >= s_saturated.TotalSeconds ? s_saturated : TimeSpan.FromSeconds(seconds);

    private static TimeSpan Max(TimeSpan span) => span < TimeSpan.Zero ? TimeSpan.Zero : span;
}
