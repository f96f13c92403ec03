namespace FanOut.Lab.Probing;

/// <summary>The limit to write: <c>recommendation</c> in probe.json.</summary>
/// <param name="Limit">The concurrency limit.</param>
/// <param name="RatePerSecond">A token-bucket rate to enforce beside it; null unless the server limits a rate.</param>
/// <param name="Reason">Why, in one line.</param>
/// <param name="OkPerSecond">Ok answers per second measured at <paramref name="Limit"/>.</param>
/// <param name="LatencyP99Ms">p99 latency measured at <paramref name="Limit"/>; null when nothing was ok.</param>
/// <param name="Code">The code that enforces it.</param>
public sealed record Recommendation(int Limit, double? RatePerSecond, string Reason, double OkPerSecond, double? LatencyP99Ms, RecommendedCode Code);
