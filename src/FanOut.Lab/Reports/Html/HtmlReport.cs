using System.Text;

using FanOut.Lab.Reports.Charts;
using FanOut.Lab.Reports.Recommendations;
using FanOut.Lab.Results;

namespace FanOut.Lab.Reports.Html;

/// <summary>report.html: one self-contained page (styles, charts and the one small script inline; nothing fetched at view time).</summary>
/// <remarks>
/// Charts are SVG written here, not drawn by a script: the page reads the same with JavaScript off, prints, and has no
/// dependency to vendor or update. The inline script only checks that every chart has data and writes the result into
/// the page (<c>body[data-chart-check]</c>) for the browser test; a reader sees a line only when a chart drew nothing.
/// </remarks>
public static class HtmlReport
{
    private const string Style = """
        body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1200px;padding:0 16px 40px;color:#222}
        h1{margin:18px 0 4px}h2{border-bottom:1px solid #ddd;padding-top:18px}h3{margin:18px 0 6px}h4{margin:0 0 4px;font-size:13px}
        nav{font-size:13px;column-count:3;margin:8px 0}nav a{display:block}
        .charts{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}
        .cards{display:grid;grid-template-columns:1fr;gap:10px}
        .card{border:1px solid #e3e3e3;border-radius:6px;padding:8px;background:#fcfcfc}
        svg.chart{background:#fff;border:1px solid #eee;max-width:100%;height:auto}
        svg text{font-size:11px;fill:#333}svg .chart-title{font-size:12px;font-weight:600}
        svg .axis line{stroke:#999}svg .axis .grid{stroke:#eee}
        svg .error-bar{stroke:#000;stroke-width:1.2;fill:none}svg .reference{fill:#000;stroke:#000;stroke-width:1.5}
        .table-wrap{overflow-x:auto}table{border-collapse:collapse;font-size:12px;margin:6px 0}
        th,td{border:1px solid #ddd;padding:3px 6px;white-space:nowrap}th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}
        table.matrix td{white-space:normal;vertical-align:top}td.contradicts{background:#fff1f0}td.agrees{background:#f3fbf3}td.measured{background:#fffbe6}
        .claim,.verdict{max-width:1000px}.verdict{background:#f6f8fa;padding:6px 10px;border-left:3px solid #1f77b4}
        .no-chart,.note{color:#666}pre{background:#f6f8fa;padding:8px;overflow-x:auto}
        dl.machine{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px}dt{font-weight:600}
        footer{margin-top:30px;color:#888;font-size:12px}
        """;

    private const string ChartCheck = """
        (function () {
          var charts = document.querySelectorAll('svg.chart');
          var empty = [];
          charts.forEach(function (svg) {
            var marks = svg.querySelectorAll('.mark');
            var drawn = Array.prototype.filter.call(marks, function (m) {
              var box = m.getBBox();
              return box.width > 0 || box.height > 0;
            });
            if (drawn.length === 0) { empty.push(svg.querySelector('title').textContent); }
          });
          var result = empty.length === 0 ? 'ok ' + charts.length : 'empty ' + empty.length + ' of ' + charts.length + ': ' + empty.join(' | ');
          document.body.setAttribute('data-chart-check', result);
          var line = document.getElementById('chart-check');
          if (line && empty.length > 0) { line.textContent = empty.length + ' of ' + charts.length + ' charts drew nothing: ' + empty.join(' | ') + '.'; }
        })();
        """;

    /// <summary>The page for <paramref name="results"/>, with <paramref name="extraSections"/> (e.g. a probe) after the scenarios.</summary>
    public static string Write(LabResults results, IReadOnlyList<string> allScenarioIds, IReadOnlyList<IReportSection>? extraSections = null)
    {
        ArgumentNullException.ThrowIfNull(results);
        IReportSection[] sections =
        [
            new MachineSection(results, allScenarioIds),
            new RecommendationsSection(RecommendationBuilder.Build(results)),
            .. results.Scenarios.Select(s => new ScenarioSection(s)),
            .. extraSections ?? [],
        ];
        return Page("FanOut lab report", sections);
    }

    /// <summary>A page of <paramref name="sections"/>: title, contents, each section under its heading, the chart check.</summary>
    public static string Page(string title, IReadOnlyList<IReportSection> sections)
    {
        ArgumentNullException.ThrowIfNull(sections);
        var html = new StringBuilder();
        html.Append("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">")
            .Append("<title>").Append(Svg.Text(title)).Append("</title><style>").Append(Style).Append("</style></head><body>");
        html.Append("<h1>").Append(Svg.Text(title)).Append("</h1><nav>");
        foreach (var section in sections)
        {
            html.Append("<a href=\"#").Append(Svg.Text(section.Id)).Append("\">").Append(Svg.Text(section.Title)).Append("</a>");
        }

        html.Append("</nav>");
        foreach (var section in sections)
        {
            html.Append("<section id=\"").Append(Svg.Text(section.Id)).Append("\"><h2>").Append(Svg.Text(section.Title)).Append("</h2>");
            section.Write(html);
            html.Append("</section>");
        }

        html.Append("<footer>Written by <code>fanout</code>; self-contained (no network). <span id=\"chart-check\"></span></footer>");
        html.Append("<script>").Append(ChartCheck).Append("</script></body></html>");
        return html.ToString();
    }
}
