using System.Globalization;

namespace FanOut.Lab.Probing;

/// <summary>The level-stopping rule: after each level, go higher or stop.</summary>
/// <remarks>
/// A level is <b>overloaded</b> when more than <see cref="MaxFailureFraction"/> of its requests were rejected (429/503)
/// or failed (timeout, socket, any other status), when its p99 is over the objective, or when its median latency is more
/// than <see cref="LatencyFactor"/> times the uncontended median (level 1): the median, because one stall of a busy
/// client machine moves a p99 of a few hundred answers but not their median. It is <b>saturated</b> when doubling the concurrency
/// raised ok/s by less than <see cref="MinGain"/> over the best level before it: past that point more concurrency only
/// queues. Either stops the ramp. A level is <b>clean</b> (may be recommended) only with no failure at all and the p99
/// within the objective.
/// </remarks>
/// <param name="SloP99Ms">The latency objective, or null.</param>
public sealed record OverloadRule(double? SloP99Ms)
{
    /// <summary>The share of failed requests above which a level is overloaded.</summary>
    /// <value>Default 0.01 (1%); 0 to 1.</value>
    public double MaxFailureFraction { get; init; } = 0.01;

    /// <summary>How many times the uncontended median latency a level's median may reach.</summary>
    /// <value>Default 4; greater than 1.</value>
    public double LatencyFactor { get; init; } = 4;

    /// <summary>The smallest relative ok/s gain that still counts as scaling.</summary>
    /// <value>Default 0.10 (10%); 0 or more.</value>
    public double MinGain { get; init; } = 0.10;

    /// <summary>Judges <paramref name="level"/> against <paramref name="baseline"/> (level 1) and the levels measured before it.</summary>
    public LevelVerdict Judge(LevelResult level, LevelResult baseline, IReadOnlyList<LevelResult> earlier)
    {
        ArgumentNullException.ThrowIfNull(level);
        ArgumentNullException.ThrowIfNull(baseline);
        ArgumentNullException.ThrowIfNull(earlier);
        var overSlo = SloP99Ms is { } slo && level.LatencyP99Ms is { } p99 && p99 > slo;
        var clean = level.FailureCount == 0 && level.Ok > 0 && !overSlo;
        var reason = OverloadReason(level, baseline, overSlo) ?? SaturationReason(level, earlier);
        return new LevelVerdict(clean, reason is not null, reason);
    }

    private string? OverloadReason(LevelResult level, LevelResult baseline, bool overSlo)
    {
        var requests = Math.Max(1, level.Requests);
        if (level.Rejections > MaxFailureFraction * requests)
        {
            return $"overloaded: {Percent(level.Rejections, requests)} rejected (429/503)";
        }

        if (level.FailureCount > MaxFailureFraction * requests)
        {
            var kinds = string.Join(", ", level.Failures.Select(f => $"{f.Value.ToString("N0", CultureInfo.InvariantCulture)} {f.Key}"));
            return $"overloaded: {Percent(level.FailureCount, requests)} failed ({kinds})";
        }

        if (level.Ok == 0)
        {
            return "overloaded: no ok answer";
        }

        if (overSlo)
        {
            return $"overloaded: p99 {Ms(level.LatencyP99Ms)} is over the {Ms(SloP99Ms)} objective";
        }

        if (level.LatencyP50Ms is { } p50 && baseline.LatencyP50Ms is { } p50Alone && p50 > LatencyFactor * p50Alone)
        {
            return $"overloaded: median {Ms(p50)} is over {LatencyFactor.ToString("0.#", CultureInfo.InvariantCulture)}x the uncontended {Ms(p50Alone)}";
        }

        return null;
    }

    private string? SaturationReason(LevelResult level, IReadOnlyList<LevelResult> earlier)
    {
        var best = earlier.Where(e => e.Concurrency < level.Concurrency).MaxBy(e => e.OkPerSecond);
        return best is not null && level.OkPerSecond < (1 + MinGain) * best.OkPerSecond
            ? $"saturated: {Rate(level.OkPerSecond)} ok/s is no more than {Rate(best.OkPerSecond)} at {best.Concurrency}"
            : null;
    }

    private static string Percent(long part, long whole) => (100.0 * part / whole).ToString("0.#", CultureInfo.InvariantCulture) + "%";

    private static string Ms(double? value) => ProbeText.Ms(value);

    private static string Rate(double value) => ProbeText.Rate(value);
}
