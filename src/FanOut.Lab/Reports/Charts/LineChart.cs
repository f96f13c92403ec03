using System.Globalization;
using System.Text;

namespace FanOut.Lab.Reports.Charts;

/// <summary>A line chart as inline SVG: axes with ticks, one path per series, optional marks at points, a legend.</summary>
public static class LineChart
{
    /// <summary>The default width in pixels.</summary>
    public const double DefaultWidth = 520;

    /// <summary>The default height of the plot and axes in pixels (the legend adds to it).</summary>
    public const double DefaultHeight = 260;
    private const double Left = 52;
    private const double Right = 12;
    private const double Top = 24;
    private const double Bottom = 40;
    private const double LegendRow = 14;
    private const double LegendGap = 8;

    /// <summary>Half the width of a mark's triangle, in pixels.</summary>
    private const double MarkSize = 4;

    /// <summary>The chart; null x/y log decides from the data's range (see <see cref="Axis.WantsLog"/>).</summary>
    /// <remarks><paramref name="marks"/> are drawn over the lines on the series' axes (a mark outside them sits on the edge);
    /// they are not counted in <c>data-marks</c>, which counts the lines.</remarks>
    public static string Render(
        string title,
        string xLabel,
        string yLabel,
        IReadOnlyList<Series> series,
        bool? logX = null,
        bool? logY = null,
        double width = DefaultWidth,
        double height = DefaultHeight,
        IReadOnlyList<ChartMark>? marks = null)
    {
        ArgumentNullException.ThrowIfNull(series);
        var drawn = series.Where(s => s.X.Count > 0 && s.X.Count == s.Y.Count).ToArray();
        if (drawn.Length == 0)
        {
            return Svg.Empty(title, "no data");
        }

        var xs = drawn.SelectMany(s => s.X).ToArray();
        var ys = drawn.SelectMany(s => s.Y).ToArray();
        var useLogX = logX ?? Axis.WantsLog(xs.Where(v => v > 0).DefaultIfEmpty(1).Min(), xs.Max());
        var useLogY = logY ?? Axis.WantsLog(ys.Where(v => v > 0).DefaultIfEmpty(1).Min(), ys.Max());
        var legendHeight = (LegendRow * Math.Ceiling(drawn.Length / 2.0)) + LegendGap;
        var plotBottom = height - Bottom;
        var x = new Axis(useLogX ? xs.Where(v => v > 0).DefaultIfEmpty(1).Min() : Math.Min(0, xs.Min()), xs.Max(), Left, width - Right, useLogX);
        var y = new Axis(useLogY ? ys.Where(v => v > 0).DefaultIfEmpty(1).Min() : Math.Min(0, ys.Min()), ys.Max(), plotBottom, Top, useLogY);

        var svg = new StringBuilder();
        Svg.Open(svg, title, width, height + legendHeight, drawn.Length);
        AppendAxes(svg, x, y, xLabel + (useLogX ? " (log)" : string.Empty), yLabel + (useLogY ? " (log)" : string.Empty), plotBottom, width);
        foreach (var s in drawn)
        {
            svg.Append(CultureInfo.InvariantCulture, $"<path class=\"mark\" data-points=\"{s.X.Count}\" fill=\"none\" stroke=\"{s.Color}\" stroke-width=\"1.6\"{(s.Dashed ? " stroke-dasharray=\"5 3\"" : string.Empty)} d=\"");
            for (var i = 0; i < s.X.Count; i++)
            {
                var px = Svg.N(x.Map(s.X[i]));
                var py = Svg.N(y.Map(s.Y[i]));
                if (i == 0)
                {
                    svg.Append(CultureInfo.InvariantCulture, $"M{px} {py}");
                }
                else if (s.Step)
                {
                    svg.Append(CultureInfo.InvariantCulture, $"H{px}V{py}");
                }
                else
                {
                    svg.Append(CultureInfo.InvariantCulture, $"L{px} {py}");
                }
            }

            // A single point still shows: a dot.
            svg.Append(s.X.Count == 1 ? "h0.1\" stroke-linecap=\"round\" stroke-width=\"6\"/>" : "\"/>");
        }

        foreach (var m in marks ?? [])
        {
            AppendMark(svg, m, x.Map(m.X), y.Map(m.Y));
        }

        for (var i = 0; i < drawn.Length; i++)
        {
            var lx = Left + (i % 2 * ((width - Left) / 2));
            var ly = height + LegendGap + (LegendRow * (i / 2)) - 4;
            svg.Append(CultureInfo.InvariantCulture, $"<line x1=\"{Svg.N(lx)}\" y1=\"{Svg.N(ly - 4)}\" x2=\"{Svg.N(lx + 16)}\" y2=\"{Svg.N(ly - 4)}\" stroke=\"{drawn[i].Color}\" stroke-width=\"2\"{(drawn[i].Dashed ? " stroke-dasharray=\"5 3\"" : string.Empty)}/>");
            svg.Append(CultureInfo.InvariantCulture, $"<text class=\"legend\" x=\"{Svg.N(lx + 20)}\" y=\"{Svg.N(ly)}\">{Svg.Text(drawn[i].Name)}</text>");
        }

        svg.Append("</svg>");
        return svg.ToString();
    }

    /// <summary>A triangle whose tip is on the point, pointing the way the value moved, with its tooltip.</summary>
    private static void AppendMark(StringBuilder svg, ChartMark mark, double px, double py)
    {
        // Tip at the point; the base 2 * MarkSize away, above a decrease and below an increase.
        var baseY = mark.Down ? py - (2 * MarkSize) : py + (2 * MarkSize);
        svg.Append(CultureInfo.InvariantCulture, $"<path class=\"decision\" data-kind=\"{Svg.Text(mark.Kind)}\" fill=\"{mark.Color}\" stroke=\"#fff\" stroke-width=\"0.6\" ")
            .Append(CultureInfo.InvariantCulture, $"d=\"M{Svg.N(px)} {Svg.N(py)}L{Svg.N(px - MarkSize)} {Svg.N(baseY)}H{Svg.N(px + MarkSize)}Z\">")
            .Append("<title>").Append(Svg.Text(mark.Tooltip)).Append("</title></path>");
    }

    private static void AppendAxes(StringBuilder svg, Axis x, Axis y, string xLabel, string yLabel, double plotBottom, double width)
    {
        svg.Append(CultureInfo.InvariantCulture, $"<g class=\"axis\"><line x1=\"{Left}\" y1=\"{Svg.N(plotBottom)}\" x2=\"{width - Right}\" y2=\"{Svg.N(plotBottom)}\"/><line x1=\"{Left}\" y1=\"{Top}\" x2=\"{Left}\" y2=\"{Svg.N(plotBottom)}\"/>");
        foreach (var t in x.Ticks())
        {
            var px = Svg.N(x.Map(t));
            svg.Append(CultureInfo.InvariantCulture, $"<line class=\"grid\" x1=\"{px}\" y1=\"{Top}\" x2=\"{px}\" y2=\"{Svg.N(plotBottom)}\"/><text x=\"{px}\" y=\"{Svg.N(plotBottom + 13)}\" text-anchor=\"middle\">{Axis.Label(t)}</text>");
        }

        foreach (var t in y.Ticks())
        {
            var py = Svg.N(y.Map(t));
            svg.Append(CultureInfo.InvariantCulture, $"<line class=\"grid\" x1=\"{Left}\" y1=\"{py}\" x2=\"{width - Right}\" y2=\"{py}\"/><text x=\"{Left - 4}\" y=\"{py}\" dy=\"3\" text-anchor=\"end\">{Axis.Label(t)}</text>");
        }

        svg.Append(CultureInfo.InvariantCulture, $"<text x=\"{Svg.N((Left + width - Right) / 2)}\" y=\"{Svg.N(plotBottom + 28)}\" text-anchor=\"middle\">{Svg.Text(xLabel)}</text>");
        svg.Append(CultureInfo.InvariantCulture, $"<text x=\"12\" y=\"{Svg.N((Top + plotBottom) / 2)}\" text-anchor=\"middle\" transform=\"rotate(-90 12 {Svg.N((Top + plotBottom) / 2)})\">{Svg.Text(yLabel)}</text></g>");
    }
}
