using System.Globalization;

namespace FanOut.Lab.Probing;

/// <summary>How the probe writes its figures in lines and tables: one definition for the engine's reasons and the CLI.</summary>
public static class ProbeText
{
    /// <summary>Milliseconds: one decimal under 10, whole above; "n/a" for none.</summary>
    public static string Ms(double? value) => value is { } v ? v.ToString(v < 10 ? "0.0" : "N0", CultureInfo.InvariantCulture) + " ms" : "n/a";

    /// <summary>A rate: one decimal under 10, whole (with thousands separators) above.</summary>
    public static string Rate(double value) => value.ToString(value < 10 ? "0.0" : "N0", CultureInfo.InvariantCulture);

    /// <summary>A recommendation's first line: the limit and how sure it is.</summary>
    public static string Headline(Recommendation recommendation)
    {
        ArgumentNullException.ThrowIfNull(recommendation);
        var limit = recommendation.Limit?.ToString(CultureInfo.InvariantCulture);
        var rate = recommendation.RatePerSecond is { } r ? $" and {Rate(r)} requests/s" : string.Empty;
        return recommendation.Status switch
        {
            RecommendationStatus.Final => $"Recommendation: {limit} at once{rate}.",
            RecommendationStatus.AtLeast => $"At least {limit} at once (not final: the endpoint was not saturated).",
            RecommendationStatus.Unconfirmed => $"Not confirmed: {limit} at once{rate} did not hold under open-loop load.",
            _ => "No recommendation.",
        };
    }

    /// <summary>The capacity search in one line.</summary>
    public static string CapacityLine(CapacityFinding capacity)
    {
        ArgumentNullException.ThrowIfNull(capacity);
        var signal = capacity.Signal == CapacityFinding.Rejections ? "it rejects beyond its capacity" : "it queues beyond its capacity";
        var estimate = capacity.Estimate is { } e ? $"; Little's law at the levels beyond it: {e.ToString("0.0", CultureInfo.InvariantCulture)}" : string.Empty;
        var searched = capacity.SearchLevels.Count == 0 ? "no level searched between" : $"searched {string.Join(", ", capacity.SearchLevels)}";
        return (capacity.Within, capacity.Beyond) switch
        {
            ({ } w, { } b) when capacity.Exact => $"Capacity: {w} ({signal}; {w} within, {b} beyond; {searched}{estimate}).",
            ({ } w, { } b) => $"Capacity: between {w} and {b - 1}, not settled ({signal}; {searched}{estimate}).",
            ({ } w, null) => $"Capacity: at least {w} (no level beyond it was measured).",
            _ => $"Capacity: none found (no level was within capacity{estimate}).",
        };
    }
}
