using FanOut.Lab.Probing;

namespace FanOut.Lab.Tests.Probing;

/// <summary>Hand-made levels for the rule and recommender tests.</summary>
internal static class LevelResults
{
    public static LevelResult Level(int concurrency, double okPerSecond, double p99Ms = 20, long rejected = 0, long requests = 1_000, long timeouts = 0) => new()
    {
        Concurrency = concurrency,
        Requests = requests,
        Ok = requests - rejected - timeouts,
        Failures = new Dictionary<string, long> { ["429"] = rejected, ["timeout"] = timeouts }.Where(f => f.Value > 0).ToDictionary(),
        OkPerSecond = okPerSecond,
        LatencyP50Ms = p99Ms / 2,
        LatencyP95Ms = p99Ms * 0.9,
        LatencyP99Ms = p99Ms,
        LatencyMeanMs = p99Ms / 2,
        LittleConcurrency = concurrency,
        Seconds = 1,
        EndedBy = LevelEnd.Measured,
        OkPerSecondWhileRejecting = rejected > 0 ? okPerSecond : null,
    };
}
