namespace FanOut.Lab.Probing;

/// <summary>The limit to write: <c>recommendation</c> in probe.json.</summary>
/// <param name="Status">How sure: <see cref="RecommendationStatus"/> (<c>final</c>, <c>at-least</c>, <c>unconfirmed</c>, <c>none</c>).
/// Only a final recommendation carries <paramref name="Code"/>.</param>
/// <param name="Limit">The concurrency limit; for <c>at-least</c> the highest concurrency found within capacity (the real
/// one is that or more); null when there is none.</param>
/// <param name="RatePerSecond">A token-bucket rate to enforce beside it; null unless the server limits a rate.</param>
/// <param name="Reason">Why, in one line.</param>
/// <param name="OkPerSecond">Ok answers per second measured at <paramref name="Limit"/>.</param>
/// <param name="LatencyP99Ms">p99 latency measured at <paramref name="Limit"/>; null when nothing was ok.</param>
/// <param name="Code">The code that enforces it; null unless <paramref name="Status"/> is <c>final</c>.</param>
public sealed record Recommendation(string Status, int? Limit, double? RatePerSecond, string Reason, double OkPerSecond, double? LatencyP99Ms, RecommendedCode? Code)
{
    /// <summary>True when the endpoint was saturated and the open-loop check held: the code may be pasted.</summary>
    public bool IsFinal => Status == RecommendationStatus.Final;
}
