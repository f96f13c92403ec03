namespace FanOut.Lab.Reports.Charts;

/// <summary>Colours: one per strategy (stable within a scenario) and a red-to-green scale for efficiency.</summary>
public static class Palette
{
    private static readonly string[] s_series =
    [
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    ];

    /// <summary>The colour of the <paramref name="index"/>th series.</summary>
    public static string Series(int index) => s_series[((index % s_series.Length) + s_series.Length) % s_series.Length];

    /// <summary>Red (0) through amber to green (1); grey when not a number.</summary>
    public static string Efficiency(double efficiency)
    {
        if (!double.IsFinite(efficiency))
        {
            return "#9e9e9e";
        }

        var hue = (int)Math.Round(Math.Clamp(efficiency, 0, 1) * 120);
        return $"hsl({hue},65%,45%)";
    }
}
