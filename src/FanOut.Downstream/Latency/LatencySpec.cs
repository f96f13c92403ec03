namespace FanOut.Downstream.Latency;

/// <summary>A distribution of simulated service times, in milliseconds.</summary>
/// <remarks>
/// The one-token SPEC syntax (see <see cref="Parse"/>) round-trips through <see cref="ToString"/>:
/// <c>fixed:20</c>, <c>uniform:10-50</c>, <c>lognormal:20,p99=80</c>.
/// Samples are drawn by a <see cref="LatencySampler"/>, which owns the seeded random source.
/// </remarks>
public abstract record LatencySpec
{
    /// <summary>The largest latency any spec may name: 10 minutes, in milliseconds.</summary>
    public const double MaxSupportedMilliseconds = 600_000;

    /// <summary>The valid SPEC forms, as quoted in every parse error.</summary>
    public const string ValidForms =
        "fixed:MS | uniform:MIN-MAX | lognormal:MEDIAN,p99=P99 (milliseconds, e.g. fixed:20, uniform:10-50, lognormal:20,p99=80)";

    // Only the three sealed records below derive from this type.
    private protected LatencySpec()
    {
    }

    /// <summary>Parses a one-token SPEC such as <c>fixed:20</c>, <c>uniform:10-50</c> or <c>lognormal:20,p99=80</c>.</summary>
    /// <param name="spec">The SPEC string; names are case-insensitive, numbers use '.' as decimal point.</param>
    /// <returns>The parsed distribution.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="spec"/> is null.</exception>
    /// <exception cref="ArgumentException">The spec is malformed or a value is out of range; the one-line message names the bad value and the valid forms.</exception>
    public static LatencySpec Parse(string spec)
    {
        ArgumentNullException.ThrowIfNull(spec);
        return LatencySpecParser.TryParse(spec, out var result, out var error)
            ? result
            : throw new ArgumentException(error, nameof(spec));
    }

    /// <summary>Parses a SPEC without throwing.</summary>
    /// <param name="spec">The SPEC string.</param>
    /// <param name="result">The parsed distribution, or null when parsing fails.</param>
    /// <param name="error">A one-line message naming the bad value and the valid forms, or null on success.</param>
    /// <returns>True when <paramref name="spec"/> is valid.</returns>
    public static bool TryParse(
        string? spec,
        [System.Diagnostics.CodeAnalysis.NotNullWhen(true)] out LatencySpec? result,
        [System.Diagnostics.CodeAnalysis.NotNullWhen(false)] out string? error)
        => LatencySpecParser.TryParse(spec, out result, out error);

    /// <summary>The distribution's mean: what a slot of the server spends per request on average, so a slot serves
    /// 1000 / <see cref="MeanMilliseconds"/> requests per second.</summary>
    /// <value>In [0, 600000] ms for fixed and uniform latencies; above the median for a log-normal one.</value>
    public abstract double MeanMilliseconds { get; }

    /// <summary>Draws one latency in milliseconds from <paramref name="random"/>.</summary>
    /// <remarks>Not thread-safe by itself: <see cref="LatencySampler"/> serialises calls.</remarks>
    internal abstract double SampleMilliseconds(Random random);

    /// <summary>The SPEC string, in the form <see cref="Parse"/> accepts.</summary>
    /// <returns>For example <c>uniform:10-50</c>.</returns>
    public abstract override string ToString();

    /// <summary>Throws when <paramref name="value"/> is not a finite latency in [0, <see cref="MaxSupportedMilliseconds"/>].</summary>
    private protected static void ThrowIfNotLatency(double value, string paramName, double minExclusiveOrInclusive = 0, bool exclusive = false)
    {
        var ok = double.IsFinite(value)
            && (exclusive ? value > minExclusiveOrInclusive : value >= minExclusiveOrInclusive)
            && value <= MaxSupportedMilliseconds;
        if (!ok)
        {
            var low = exclusive ? $"({Format(minExclusiveOrInclusive)}" : $"[{Format(minExclusiveOrInclusive)}";
            throw new ArgumentOutOfRangeException(
                paramName, value, $"{paramName} must be a latency in {low}, {Format(MaxSupportedMilliseconds)}] ms; got {Format(value)}.");
        }
    }

    /// <summary>Formats a millisecond value the way the SPEC syntax writes it (invariant, shortest round-trip).</summary>
    private protected static string Format(double value)
        => value.ToString("R", System.Globalization.CultureInfo.InvariantCulture);
}
