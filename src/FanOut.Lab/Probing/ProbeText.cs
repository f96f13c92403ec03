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

    /// <summary>
    /// The USL fit in one or two lines (the fit, then its bootstrap band), or none without a fit. A modelled peak beyond
    /// the capacity the search measured is not offered as a figure: the curve is smoothed over the levels and cannot see
    /// the edge where the server started to reject or queue, so the lines say to use the capacity instead.
    /// </summary>
    public static IReadOnlyList<string> UslLines(ProbeReport report)
    {
        ArgumentNullException.ThrowIfNull(report);
        if (report.Usl is not { } usl)
        {
            return [];
        }

        var fit = $"USL fit: sigma {F(usl.Sigma, "0.####")}, kappa {F(usl.Kappa, "0.######")}, lambda {Rate(usl.Lambda)} ok/s, R2 {F(usl.R2, "0.###")}";
        var band = report.UslBand;
        if (PeakBeyondCapacity(report) is { } capacity)
        {
            var peak = F(usl.PeakConcurrency!.Value, "0");
            return
            [
                $"{fit}. Its curve peaks at {peak} at once, past the capacity measured above ({capacity}): the fit smooths the levels over the edge where the server began to {(report.Capacity!.Signal == CapacityFinding.Rejections ? "reject" : "queue")}, so use the capacity, not the curve's peak.",
                .. band is null ? Array.Empty<string>() : [$"USL band ({band.Resamples} bootstrap resamples over the levels): contention sigma between {F(band.SigmaLow, "0.####")} and {F(band.SigmaHigh, "0.####")}; the modelled peak is left out, as above."],
            ];
        }

        var shape = usl.PeakConcurrency is { } p ? $"throughput peaks at {F(p, "0")} at once" : "no peak (kappa 0: throughput levels off, it does not fall)";
        return
        [
            $"{fit}: {shape}.",
            .. band is null ? Array.Empty<string>() : [$"USL band ({band.Resamples} bootstrap resamples over the levels): {band.Plain}"],
        ];
    }

    /// <summary>The measured capacity when the fit's peak lies beyond the first level found beyond it (the peak is then not shown); null otherwise.</summary>
    public static int? PeakBeyondCapacity(ProbeReport report) =>
        report.Usl?.PeakConcurrency is { } peak && report.Capacity is { Within: { } within, Beyond: { } beyond } && peak > beyond ? within : null;

    private static string F(double value, string format) => value.ToString(format, CultureInfo.InvariantCulture);
}
