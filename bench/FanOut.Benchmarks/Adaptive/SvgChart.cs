using System.Globalization;
using System.Text;

namespace FanOut.Benchmarks.Adaptive;

/// <summary>Draws the adaptive limit over time as a small self-contained SVG line chart.</summary>
public static class SvgChart
{
    public static string Render(IReadOnlyList<(double Ms, int Limit)> trace, int capacity, double totalMs, string downstream)
    {
        const int width = 720, height = 320, left = 50, right = 20, top = 30, bottom = 40;
        var maxMs = Math.Max(totalMs, trace.Count > 0 ? trace[^1].Ms : 1);
        var maxLimit = Math.Max(capacity * 2, trace.Count > 0 ? trace.Max(t => t.Limit) : 1) * 1.1;
        double X(double ms) => left + ((width - left - right) * ms / maxMs);
        double Y(double limit) => height - bottom - ((height - top - bottom) * limit / maxLimit);
        string F(double v) => v.ToString("F1", CultureInfo.InvariantCulture);

        var svg = new StringBuilder();
        svg.AppendLine(CultureInfo.InvariantCulture, $"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"12\">");
        svg.AppendLine(CultureInfo.InvariantCulture, $"<rect width=\"{width}\" height=\"{height}\" fill=\"white\"/>");
        svg.AppendLine(CultureInfo.InvariantCulture, $"<text x=\"{left}\" y=\"18\">Adaptive limit over time, downstream capacity C = {capacity}, {downstream} (measured run)</text>");

        // Axes and the band the targets allow (0.7C..1.5C).
        svg.AppendLine(CultureInfo.InvariantCulture, $"<rect x=\"{left}\" y=\"{F(Y(1.5 * capacity))}\" width=\"{width - left - right}\" height=\"{F(Y(0.7 * capacity) - Y(1.5 * capacity))}\" fill=\"#e6f4ea\"/>");
        svg.AppendLine(CultureInfo.InvariantCulture, $"<line x1=\"{left}\" y1=\"{F(Y(capacity))}\" x2=\"{width - right}\" y2=\"{F(Y(capacity))}\" stroke=\"#888\" stroke-dasharray=\"4 3\"/>");
        svg.AppendLine(CultureInfo.InvariantCulture, $"<text x=\"{width - right - 150}\" y=\"{F(Y(capacity) - 4)}\" fill=\"#555\">C = {capacity} (band 0.7C..1.5C)</text>");
        svg.AppendLine(CultureInfo.InvariantCulture, $"<line x1=\"{left}\" y1=\"{height - bottom}\" x2=\"{width - right}\" y2=\"{height - bottom}\" stroke=\"black\"/>");
        svg.AppendLine(CultureInfo.InvariantCulture, $"<line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{height - bottom}\" stroke=\"black\"/>");
        for (var v = 0; v <= maxLimit; v += Math.Max(1, (int)(maxLimit / 5)))
        {
            svg.AppendLine(CultureInfo.InvariantCulture, $"<text x=\"{left - 6}\" y=\"{F(Y(v) + 4)}\" text-anchor=\"end\">{v}</text>");
        }

        var step = Math.Max(100, Math.Round(maxMs / 6 / 100) * 100);
        for (var ms = 0.0; ms <= maxMs; ms += step)
        {
            svg.AppendLine(CultureInfo.InvariantCulture, $"<text x=\"{F(X(ms))}\" y=\"{height - bottom + 16}\" text-anchor=\"middle\">{ms:F0}</text>");
        }

        svg.AppendLine(CultureInfo.InvariantCulture, $"<text x=\"{(width + left) / 2}\" y=\"{height - 6}\" text-anchor=\"middle\">time (ms)</text>");
        svg.AppendLine(CultureInfo.InvariantCulture, $"<text x=\"14\" y=\"{(height - bottom + top) / 2}\" transform=\"rotate(-90 14 {(height - bottom + top) / 2})\" text-anchor=\"middle\">limit</text>");

        // The limit as a step line.
        var path = new StringBuilder();
        for (var i = 0; i < trace.Count; i++)
        {
            var (ms, limit) = trace[i];
            path.Append(i == 0 ? "M" : " L").Append(F(X(ms))).Append(',').Append(F(Y(i == 0 ? limit : trace[i - 1].Limit)));
            path.Append(" L").Append(F(X(ms))).Append(',').Append(F(Y(limit)));
        }

        svg.AppendLine(CultureInfo.InvariantCulture, $"<path d=\"{path}\" fill=\"none\" stroke=\"#1a73e8\" stroke-width=\"2\"/>");
        svg.AppendLine("</svg>");
        return svg.ToString();
    }
}
