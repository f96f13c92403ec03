namespace FanOut.Benchmarks.Adaptive;

/// <summary>Normal draws from a seeded <see cref="Random"/>, so every contender of a round waits the same.</summary>
internal static class Gaussian
{
    /// <summary>A standard normal draw, by Box-Muller.</summary>
    public static double Next(Random random) => Math.Sqrt(-2 * Math.Log(1 - random.NextDouble())) * Math.Cos(2 * Math.PI * random.NextDouble());
}
