using System.Globalization;
using System.Text;

namespace FanOut.Lab.Reports.Charts;

/// <summary>A horizontal bar chart as inline SVG: one row per bar, error bars, an optional reference mark, log scale when the range calls for it.</summary>
public static class BarChart
{
    private const double Width = 820;
    private const double LabelWidth = 260;
    private const double ValueWidth = 210;
    private const double RowHeight = 20;
    private const double Top = 24;
    private const double Bottom = 48;

    /// <summary>Characters of a row label that fit in <see cref="LabelWidth"/> at 11 px.</summary>
    private const int MaxLabel = 40;

    /// <summary>The chart; <paramref name="referenceName"/> names the reference marks in the legend when any bar has one.</summary>
    public static string Render(string title, string unit, IReadOnlyList<Bar> bars, string? referenceName = null, bool? log = null)
    {
        ArgumentNullException.ThrowIfNull(bars);
        var drawn = bars.Where(b => double.IsFinite(b.Value)).ToArray();
        if (drawn.Length == 0)
        {
            return Svg.Empty(title, "no data");
        }

        var values = drawn.SelectMany(b => new[] { b.Value + (b.Error ?? 0), b.Reference ?? b.Value }).Append(drawn.Min(b => b.Value)).ToArray();
        var positive = values.Where(v => v > 0).DefaultIfEmpty(1).ToArray();
        var useLog = log ?? Axis.WantsLog(positive.Min(), positive.Max());
        var plotBottom = Top + (RowHeight * drawn.Length);
        var height = plotBottom + Bottom;
        var axis = new Axis(useLog ? positive.Min() : 0, values.Max(), LabelWidth, Width - ValueWidth, useLog);

        var svg = new StringBuilder();
        Svg.Open(svg, title, Width, height, drawn.Count(b => b.Value > 0 || !useLog));
        svg.Append("<g class=\"axis\">");
        foreach (var t in axis.Ticks())
        {
            var px = Svg.N(axis.Map(t));
            svg.Append(CultureInfo.InvariantCulture, $"<line class=\"grid\" x1=\"{px}\" y1=\"{Top}\" x2=\"{px}\" y2=\"{Svg.N(plotBottom)}\"/><text x=\"{px}\" y=\"{Svg.N(plotBottom + 12)}\" text-anchor=\"middle\">{Axis.Label(t)}</text>");
        }

        svg.Append(CultureInfo.InvariantCulture, $"<text x=\"{Svg.N((LabelWidth + Width - ValueWidth) / 2)}\" y=\"{Svg.N(plotBottom + 26)}\" text-anchor=\"middle\">{Svg.Text(unit + (useLog ? " (log)" : string.Empty))}</text></g>");
        for (var i = 0; i < drawn.Length; i++)
        {
            var bar = drawn[i];
            var y = Top + (i * RowHeight);
            var x0 = axis.Map(useLog ? 0 : Math.Min(0, bar.Value));
            var x1 = axis.Map(bar.Value);
            var middle = y + (RowHeight / 2);
            svg.Append(CultureInfo.InvariantCulture, $"<text class=\"label\" x=\"{LabelWidth - 6}\" y=\"{Svg.N(middle)}\" dy=\"4\" text-anchor=\"end\">{Svg.Text(Shorten(bar.Label))}</text>");
            svg.Append(CultureInfo.InvariantCulture, $"<rect class=\"mark\" x=\"{Svg.N(x0)}\" y=\"{Svg.N(y + 3)}\" width=\"{Svg.N(Math.Max(1, x1 - x0))}\" height=\"{RowHeight - 6}\" fill=\"{bar.Color}\"><title>{Svg.Text($"{bar.Label}: {bar.Text ?? Axis.Label(bar.Value)}")}</title></rect>");
            if (bar.Error is { } error && error > 0)
            {
                var lo = Svg.N(axis.Map(Math.Max(bar.Value - error, useLog ? double.Epsilon : 0)));
                var hi = Svg.N(axis.Map(bar.Value + error));
                svg.Append(CultureInfo.InvariantCulture, $"<path class=\"error-bar\" d=\"M{lo} {Svg.N(middle)}H{hi}M{lo} {Svg.N(middle - 4)}V{Svg.N(middle + 4)}M{hi} {Svg.N(middle - 4)}V{Svg.N(middle + 4)}\"/>");
            }

            if (bar.Reference is { } reference)
            {
                var rx = Svg.N(axis.Map(reference));
                svg.Append(CultureInfo.InvariantCulture, $"<path class=\"reference\" d=\"M{rx} {Svg.N(y + 1)}l-4 -4h8z M{rx} {Svg.N(y + 1)}V{Svg.N(y + RowHeight - 1)}\"><title>{Svg.Text($"{referenceName ?? "reference"}: {Axis.Label(reference)}")}</title></path>");
            }

            svg.Append(CultureInfo.InvariantCulture, $"<text class=\"value\" x=\"{Width - ValueWidth + 6}\" y=\"{Svg.N(middle)}\" dy=\"4\">{Svg.Text(bar.Text ?? Axis.Label(bar.Value))}</text>");
        }

        if (referenceName is not null && drawn.Any(b => b.Reference is not null))
        {
            svg.Append(CultureInfo.InvariantCulture, $"<path class=\"reference\" d=\"M{LabelWidth + 4} {Svg.N(height - 8)}l-4 -4h8z\"/><text class=\"legend\" x=\"{LabelWidth + 12}\" y=\"{Svg.N(height - 4)}\">{Svg.Text(referenceName)}</text>");
        }

        svg.Append("</svg>");
        return svg.ToString();
    }

    private static string Shorten(string label) => label.Length <= MaxLabel ? label : label[..(MaxLabel - 1)] + "…";
}
