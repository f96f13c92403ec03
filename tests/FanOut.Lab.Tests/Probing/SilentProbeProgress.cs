using FanOut.Lab.Probing;

namespace FanOut.Lab.Tests.Probing;

/// <summary>Collects the probe's progress lines for the test log.</summary>
internal sealed class SilentProbeProgress : IProbeProgress
{
    public List<string> Lines { get; } = [];

    public void LevelStarted(int concurrency)
    {
    }

    public void LevelFinished(LevelResult level, LevelVerdict verdict) =>
        Lines.Add($"{level.Concurrency}: {level.Requests} requests, {level.OkPerSecond:0} ok/s, p99 {level.LatencyP99Ms:0.0} ms, mean {level.LatencyMeanMs:0.0} ms (sd {level.LatencyStdDevMs:0.0}), X*R {level.OkLittleConcurrency:0.0}, failures {string.Join(",", level.Failures.Select(f => $"{f.Key}={f.Value}"))}, clean {verdict.Clean}, {verdict.Reason}");

    public void Note(string message) => Lines.Add(message);
}
