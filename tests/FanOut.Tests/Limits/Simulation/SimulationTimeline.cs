namespace FanOut.Tests.Limits.Simulation;

/// <summary>What the scenario tests read from a simulation's timeline (the suite's, and the fleet's in FanOut.Redis.Tests, which links this file).</summary>
public static class SimulationTimeline
{
    /// <summary>The first time from which every sample until <paramref name="until"/> has its limit within <paramref name="low"/>..<paramref name="high"/>.</summary>
    public static TimeSpan? SettledFrom(this IReadOnlyList<TimelineSample> timeline, TimeSpan from, TimeSpan until, double low, double high)
    {
        TimeSpan? settled = null;
        foreach (var sample in timeline.Where(s => s.At >= from && s.At < until))
        {
            var inBand = sample.Limit >= low && sample.Limit <= high;
            settled = inBand ? settled ?? sample.At : null;
        }

        return settled;
    }

    /// <summary>Limit/in flight/capacity every quarter of a second (or <paramref name="stepSeconds"/>) from <paramref name="from"/> to <paramref name="until"/>, for failure messages.</summary>
    public static string Describe(this IReadOnlyList<TimelineSample> timeline, TimeSpan from, TimeSpan until, double stepSeconds = 0.25) =>
        string.Join(" ", Enumerable.Range(0, (int)((until - from).TotalSeconds / stepSeconds))
            .Select(i => timeline.FirstOrDefault(s => s.At >= from + TimeSpan.FromSeconds(i * stepSeconds)))
            .Where(s => s.At > TimeSpan.Zero)
            .Select(s => $"{s.At.TotalSeconds:F2}s:{s.Limit}/{s.InFlight}/{s.Capacity}"));
}
