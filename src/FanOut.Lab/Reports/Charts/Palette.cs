namespace FanOut.Lab.Reports.Charts;

/// <summary>Colours: one per strategy, stable within a scenario.</summary>
/// <remarks>No scale from bad to good: a chart of times coloured by anything but the strategy lets a slower row look better.</remarks>
public static class Palette
{
    private static readonly string[] s_series =
    [
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    ];

    /// <summary>The one colour of every bar in a chart of times: the length says which is faster, the colour says nothing.</summary>
    public const string Time = "#5b7a99";

    /// <summary>The colour of the <paramref name="index"/>th series.</summary>
    public static string Series(int index) => s_series[((index % s_series.Length) + s_series.Length) % s_series.Length];
}
