using System.Globalization;

using FanOut.Lab.Reports.Charts;
using FanOut.Lab.Results;

namespace FanOut.Lab.Reports.Html;

/// <summary>For scenarios that ran a grid (seed 001, seed 004): mean time against each varying parameter, one line per strategy, one chart per value of the others.</summary>
public static class GridCharts
{
    /// <summary>The charts; none when no numeric parameter varies.</summary>
    public static IReadOnlyList<string> For(IReadOnlyList<CaseResult> cases)
    {
        ArgumentNullException.ThrowIfNull(cases);
        var numeric = cases.SelectMany(c => c.Parameters.Keys).Distinct()
            .Where(k => cases.All(c => Number(c, k) is not null) && cases.Select(c => Number(c, k)).Distinct().Count() > 1)
            .ToArray();
        var strategies = cases.Select(c => c.Strategy).Distinct().ToList();
        var charts = new List<string>();
        foreach (var key in numeric)
        {
            var others = numeric.Where(k => k != key).ToArray();
            foreach (var slice in cases.GroupBy(c => string.Join(' ', others.Select(k => $"{Name(k)}={Number(c, k)!.Value.ToString(CultureInfo.InvariantCulture)}"))))
            {
                var series = slice.GroupBy(c => c.Strategy)
                    .Select(g => g.OrderBy(c => Number(c, key)).ToArray())
                    .Where(points => points.Length > 1)
                    .Select(points => new Series(points[0].Strategy, Palette.Series(strategies.IndexOf(points[0].Strategy)), points.Select(c => Number(c, key)!.Value).ToArray(), points.Select(c => c.MeanMs).ToArray()))
                    .ToArray();
                if (series.Length > 0)
                {
                    var title = $"Mean time against {Name(key)}" + (slice.Key.Length > 0 ? $" at {slice.Key}" : string.Empty);
                    charts.Add(LineChart.Render(title, Name(key), "mean ms", series));
                }
            }
        }

        return charts;
    }

    private static string Name(string key) => key == "itemCount" ? "N (items)" : key;

    private static double? Number(CaseResult c, string key) =>
        c.Parameters.TryGetValue(key, out var value) && value.ToString() is { } text && text is not ("True" or "False")
            && double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out var number)
            ? number
            : null;
}
