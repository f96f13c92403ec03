namespace FanOut.Benchmarks.Adaptive;

/// <summary>Normal draws from a seeded <see cref="Random"/>, so every contender of a round waits the same.</summary>
internal static class Gaussian
{
    /// <summary>The sigma of ln(latency) that puts p99 at ten times the median (z of 0.99 is 2.326): the heavy tail.</summary>
    public static readonly double HeavyTailSigma = Math.Log(10) / 2.326;

    /// <summary>A standard normal draw, by Box-Muller.</summary>
    public static double Next(Random random) => Math.Sqrt(-2 * Math.Log(1 - random.NextDouble())) * Math.Cos(2 * Math.PI * random.NextDouble());
}
