namespace FanOut.Lab.Probing;

/// <summary>What the capacity search found: <c>capacity</c> in probe.json.</summary>
/// <param name="Signal">How the server shows its capacity: <c>rejections</c> (it rejects beyond it) or <c>latency</c> (it queues).</param>
/// <param name="UnqueuedLatencyMs">R0: the mean ok latency with nothing queued (the lowest mean of the levels measured in full without a failure).</param>
/// <param name="Within">The highest level found within capacity; null when none.</param>
/// <param name="Beyond">The lowest level found beyond it; null when none.</param>
/// <param name="Estimate">The capacity by Little's law from the levels beyond it (median); null when none.</param>
/// <param name="SearchLevels">The levels the search measured between the ramp's powers of two.</param>
/// <param name="Exact">True when <paramref name="Within"/> + 1 = <paramref name="Beyond"/>: the capacity is <paramref name="Within"/>.</param>
public sealed record CapacityFinding(string Signal, double UnqueuedLatencyMs, int? Within, int? Beyond, double? Estimate, IReadOnlyList<int> SearchLevels, bool Exact)
{
    /// <summary>The server rejects beyond its capacity.</summary>
    public const string Rejections = "rejections";

    /// <summary>The server queues beyond its capacity.</summary>
    public const string Latency = "latency";
}
