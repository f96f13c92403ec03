namespace FanOut.Tests.Infrastructure;

/// <summary>Draws from a seeded <see cref="Random"/>, so a simulated run is repeatable.</summary>
internal static class RandomExtensions
{
    /// <summary>A standard normal draw, by Box-Muller.</summary>
    public static double NextStandardNormal(this Random random)
    {
        var u1 = 1.0 - random.NextDouble();
        var u2 = random.NextDouble();
        return Math.Sqrt(-2.0 * Math.Log(u1)) * Math.Cos(2.0 * Math.PI * u2);
    }
}
