using System.Globalization;

namespace FanOut.Lab.Probing;

/// <summary>Turns what the probe found into the limit to write, its one-line reason, and (only when final) the code.</summary>
/// <remarks>
/// A recommendation is final only when the endpoint showed its limit: the capacity found exactly (the highest level within
/// it next to the lowest beyond it, see <see cref="CapacitySearch"/>), or a rate limit. A rate comes with a concurrency
/// that can carry it: by Little's law a rate R of calls lasting L each keeps R x L in flight on average, so the limit is
/// R x L x <see cref="ConcurrencyHeadroom"/>, rounded up. Anything the probe could not see through (a cap, an interruption,
/// every level failing) gives "at least N" or nothing, with the reason and no code.
/// </remarks>
public static class Recommender
{
    /// <summary>The share of the server's sustained rate to recommend, so clock drift and bursts stay under its limit.</summary>
    public const double RateHeadroom = 0.9;

    /// <summary>The concurrency recommended beside a rate is this many times rate x mean latency, for latency above the mean.</summary>
    public const double ConcurrencyHeadroom = 1.25;

    /// <summary>The capacity was found: <paramref name="within"/> is within it, <paramref name="beyond"/> (one more) is not.</summary>
    /// <param name="within">The highest level within capacity.</param>
    /// <param name="beyond">The level one above it, beyond capacity.</param>
    /// <param name="beyondReason">Why <paramref name="beyond"/> is beyond capacity.</param>
    /// <param name="estimate">The capacity Little's law put on the levels beyond it, or null.</param>
    public static Recommendation AtCapacity(LevelResult within, LevelResult beyond, string beyondReason, double? estimate)
    {
        ArgumentNullException.ThrowIfNull(within);
        ArgumentNullException.ThrowIfNull(beyond);
        var n = within.Concurrency;
        var little = estimate is { } e ? $"; Little's law at the levels beyond it puts the capacity at {e.ToString("0.0", CultureInfo.InvariantCulture)}" : string.Empty;
        var failures = within.FailureCount == 0 ? "no failures" : $"{within.FailureCount.ToString("N0", CultureInfo.InvariantCulture)} of {within.Requests.ToString("N0", CultureInfo.InvariantCulture)} failed (the races of a level at its capacity)";
        var reason = $"the capacity is {N(n)} at once: {N(n)} gave {Rate(within.OkPerSecond)} ok/s with {failures} and p99 {ProbeText.Ms(within.LatencyP99Ms)}; {N(beyond.Concurrency)} {beyondReason}{little}";
        return new Recommendation(RecommendationStatus.Final, n, null, reason, within.OkPerSecond, within.LatencyP99Ms, RecommendedCode.For(n, null));
    }

    /// <summary>The server limits a rate: <see cref="RateHeadroom"/> of it, and the concurrency that carries that rate.</summary>
    /// <param name="rate">The rate verdict (a rate limit).</param>
    /// <param name="meanLatencyMs">The mean latency of an ok call below the limit (the probe gives the highest level mean), milliseconds.</param>
    /// <param name="p99Ms">The p99 latency below the limit, for the record.</param>
    public static Recommendation ForRate(RateVerdict rate, double meanLatencyMs, double? p99Ms)
    {
        ArgumentNullException.ThrowIfNull(rate);
        var perSecond = Math.Round(rate.SustainedOkPerSecond * RateHeadroom, 1);
        var limit = ConcurrencyFor(perSecond, meanLatencyMs);
        var reason = $"the server limits the rate ({rate.Evidence}): at most {Rate(perSecond)}/s ({RateHeadroom * 100:0}% of it), with {N(limit)} at once to carry it ({Rate(perSecond)}/s x {ProbeText.Ms(meanLatencyMs)} mean latency x {ConcurrencyHeadroom.ToString("0.##", CultureInfo.InvariantCulture)} headroom, rounded up)";
        return new Recommendation(RecommendationStatus.Final, limit, perSecond, reason, perSecond, p99Ms, RecommendedCode.For(limit, perSecond));
    }

    /// <summary>The concurrency that carries <paramref name="perSecond"/> calls of <paramref name="meanLatencyMs"/>: rate x latency x headroom, rounded up, at least 1.</summary>
    public static int ConcurrencyFor(double perSecond, double meanLatencyMs) =>
        Math.Max(1, (int)Math.Ceiling(perSecond * meanLatencyMs / 1000 * ConcurrencyHeadroom - 1e-9));

    /// <summary>The probe stopped before the endpoint showed its limit: it is at least <paramref name="level"/>'s concurrency.</summary>
    public static Recommendation AtLeast(LevelResult level, string why)
    {
        ArgumentNullException.ThrowIfNull(level);
        var reason = $"at least {N(level.Concurrency)} at once ({Rate(level.OkPerSecond)} ok/s, p99 {ProbeText.Ms(level.LatencyP99Ms)}, nothing rejected), but {why}, so the capacity may be higher; no code until a probe saturates it";
        return new Recommendation(RecommendationStatus.AtLeast, level.Concurrency, null, reason, level.OkPerSecond, level.LatencyP99Ms, null);
    }

    /// <summary>Nothing to recommend, because <paramref name="why"/>.</summary>
    public static Recommendation None(string why) => new(RecommendationStatus.None, null, null, $"no recommendation: {why}", 0, null, null);

    /// <summary><paramref name="found"/> did not hold under open-loop load: kept for the record, without code.</summary>
    public static Recommendation Unconfirmed(Recommendation found, string why)
    {
        ArgumentNullException.ThrowIfNull(found);
        return found with { Status = RecommendationStatus.Unconfirmed, Code = null, Reason = $"{found.Reason}; but not confirmed: {why}" };
    }

    private static string N(int value) => value.ToString(CultureInfo.InvariantCulture);

    private static string Rate(double value) => ProbeText.Rate(value);
}
