using FanOut.Limits.Adaptive;

using Xunit.Abstractions;

namespace FanOut.Tests.Limits.Simulation;

public sealed class StagedLawTraceScratch(ITestOutputHelper output)
{
    [Theory]
    [InlineData("heavy", "loop", 1)]
    public void Trace(string shape, string place, int seed)
    {
        var state = shape switch
        {
            "heavy" => new DownstreamState { Capacity = 100_000, Latency = TimeSpan.FromMilliseconds(40), Shape = LatencyShape.HeavyTail },
            "bimodal" => new DownstreamState { Capacity = 100_000, Shape = LatencyShape.Bimodal },
            _ => new DownstreamState { Capacity = 100_000, SmoothKnee = 22 },
        };
        var script = DownstreamScript.Constant(state);
        var where = LawPlace.Named(place);
        var simulation = new LimitSimulation(script, seed) { CallSize = where.CallSize };
        var lines = new List<string>();
        BandwidthDelayLaw.Trace = l => lines.Add($"{simulation.Now.TotalMilliseconds:F0}ms {l}");
        simulation.Run(ConcurrencyLimit.Adaptive(simulation.Options(where.Options with { UsesBandwidthDelayLaw = true })), duration: TimeSpan.FromSeconds(10));
        BandwidthDelayLaw.Trace = null;
        foreach (var line in lines.Take(150))
        {
            output.WriteLine(line);
        }

        output.WriteLine(simulation.Timeline.Describe(TimeSpan.Zero, TimeSpan.FromSeconds(10), 0.5));
        Assert.True(lines.Count >= 0);
    }
}
