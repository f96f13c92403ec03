namespace FanOut.Lab.Scenarios;

/// <summary>How big to build a scenario: a scale for per-item time and whether to run the seed's whole grid.</summary>
/// <param name="Scale">Multiplies every per-item duration and CPU work count; 0 &lt; scale &lt;= 1. Item counts stay, because they decide the concurrency a strategy reaches.</param>
/// <param name="Full">True to run the seed's exact grid; false for the representative subset the default run uses.</param>
public sealed record ScenarioSize(double Scale = 1.0, bool Full = false)
{
    /// <summary>The size <c>fanout run</c> uses when given no options.</summary>
    public static ScenarioSize Default { get; } = new();

    /// <summary>Checks <paramref name="scale"/> and explains the valid range when it is outside it.</summary>
    public static string? ValidateScale(double scale) =>
        double.IsFinite(scale) && scale > 0 && scale <= 1
            ? null
            : $"--scale {scale.ToString(System.Globalization.CultureInfo.InvariantCulture)} is outside (0, 1]: use a number greater than 0 and at most 1, e.g. 0.25.";

    /// <summary>A scaled duration; a non-zero duration never scales below 1 ms, because Task.Delay(0) completes synchronously and would change what is measured.</summary>
    public int Ms(int milliseconds) => milliseconds == 0 ? 0 : Math.Max(1, (int)Math.Round(milliseconds * Scale));

    /// <summary>A scaled CPU work count, at least 1.</summary>
    public int Work(int count) => Math.Max(1, (int)Math.Round(count * Scale));

    /// <summary>The grid values to use: all of <paramref name="full"/> with <see cref="Full"/>, else <paramref name="subset"/>.</summary>
    public IReadOnlyList<int> Pick(int[] full, int[] subset) => Full ? full : subset;
}
