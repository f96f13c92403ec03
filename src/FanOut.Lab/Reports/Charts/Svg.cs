using System.Globalization;
using System.Net;
using System.Text;

namespace FanOut.Lab.Reports.Charts;

/// <summary>Small helpers for writing SVG by hand: invariant numbers and escaped text.</summary>
public static class Svg
{
    /// <summary>A coordinate with one decimal, invariant culture.</summary>
    public static string N(double value) => value.ToString("0.#", CultureInfo.InvariantCulture);

    /// <summary>Text escaped for an element or an attribute.</summary>
    public static string Text(string text) => WebUtility.HtmlEncode(text);

    /// <summary>Opens a chart: an <c>svg.chart</c> with a title (for screen readers and hover) and <paramref name="marks"/> in <c>data-marks</c>.</summary>
    public static void Open(StringBuilder svg, string title, double width, double height, int marks)
    {
        ArgumentNullException.ThrowIfNull(svg);
        svg.Append(CultureInfo.InvariantCulture, $"<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {N(width)} {N(height)}\" width=\"{N(width)}\" height=\"{N(height)}\" role=\"img\" data-marks=\"{marks}\">");
        svg.Append("<title>").Append(Text(title)).Append("</title>");
        svg.Append(CultureInfo.InvariantCulture, $"<text class=\"chart-title\" x=\"{N(width / 2)}\" y=\"14\" text-anchor=\"middle\">{Text(title)}</text>");
    }

    /// <summary>A message in place of a chart that has nothing to draw.</summary>
    public static string Empty(string title, string why) =>
        $"<p class=\"no-chart\"><b>{Text(title)}</b>: {Text(why)}</p>";
}
