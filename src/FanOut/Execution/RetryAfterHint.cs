using System.Globalization;

namespace FanOut.Execution;

/// <summary>Finds a downstream's retry-after hint in a failure's exception chain.</summary>
/// <remarks>
/// <c>HttpRequestException</c> carries a status code but no headers, so the hint travels either as an
/// <see cref="OverloadedException"/> anywhere in the chain (the body wraps the response's <c>Retry-After</c>), or in any
/// exception's <see cref="Exception.Data"/> under <see cref="DataKey"/>: a <see cref="TimeSpan"/>, a number of seconds, or
/// the header's text (delta-seconds or an HTTP date).
/// </remarks>
internal static class RetryAfterHint
{
    /// <summary>The <see cref="Exception.Data"/> key read for a hint (the HTTP header's name).</summary>
    public const string DataKey = "Retry-After";

    public static TimeSpan? From(Exception failure, DateTimeOffset now)
    {
        for (var e = failure; e is not null; e = e.InnerException)
        {
            if (e is OverloadedException { RetryAfter: { } hint })
            {
                return hint;
            }

            if (e.Data.Contains(DataKey) && Parse(e.Data[DataKey], now) is { } fromData)
            {
                return fromData;
            }
        }

        return null;
    }

    /// <summary>Any hint at or above this is read as this: longer than any pause a fan-out honours, and far from overflowing.</summary>
    private static readonly TimeSpan s_saturated = TimeSpan.FromDays(365);

    private static TimeSpan? Parse(object? value, DateTimeOffset now) => value switch
    {
        TimeSpan span when span >= TimeSpan.Zero => span,
        int seconds when seconds >= 0 => FromSeconds(seconds),
        long seconds when seconds >= 0 => FromSeconds(seconds),
        double seconds when seconds >= 0 => FromSeconds(seconds), // NaN fails the test: no hint
        DateTimeOffset at => Max(at - now),
        string text when decimal.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var seconds) => FromSeconds((double)seconds),
        string text when text.Length > 0 && text.All(char.IsAsciiDigit) => s_saturated, // more digits than a decimal holds
        string text when DateTimeOffset.TryParseExact(text, "r", CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal, out var at) => Max(at - now),
        _ => null,
    };

    /// <summary>Seconds as a span, saturating instead of overflowing (infinity, 1e300).</summary>
    private static TimeSpan FromSeconds(double seconds) =>
        seconds >= s_saturated.TotalSeconds ? s_saturated : TimeSpan.FromSeconds(seconds);

    private static TimeSpan Max(TimeSpan span) => span < TimeSpan.Zero ? TimeSpan.Zero : span;
}
