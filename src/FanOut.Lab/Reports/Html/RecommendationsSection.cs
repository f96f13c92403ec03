using System.Text;

using FanOut.Lab.Reports.Charts;
using FanOut.Lab.Reports.Recommendations;
using FanOut.Lab.Results;

namespace FanOut.Lab.Reports.Html;

/// <summary>Seed 000's decision matrix with this machine's numbers: per workload shape, what to use, the limit, the runner-up and the rows behind it.</summary>
public sealed class RecommendationsSection(IReadOnlyList<Recommendation> recommendations) : IReportSection
{
    /// <inheritdoc/>
    public string Id => "recommendations";

    /// <inheritdoc/>
    public string Title => "What to use on this machine";

    /// <inheritdoc/>
    public void Write(StringBuilder html)
    {
        ArgumentNullException.ThrowIfNull(html);
        if (recommendations.Count == 0)
        {
            html.Append("<p>No scenario of the decision matrix finished in this run.</p>");
            return;
        }

        html.Append("<p>For each kind of work measured: the fastest strategy that completed every item (a case whose items failed, e.g. turned away with 429, exceeded the downstream's means and is not recommended), compared at the heaviest size the scenario ran. For I/O whose downstream limit nobody knows, the advice is FanOut's default, the adaptive limit; a row with no bound is quoted, not advised.</p>");
        html.Append("<table class=\"matrix\"><thead><tr><th>Work</th><th>Use</th><th>Limit</th><th>Runner-up</th><th>Seeds</th></tr></thead><tbody>");
        foreach (var r in recommendations)
        {
            html.Append("<tr><td><a href=\"#").Append(Svg.Text(r.Scenario.Id)).Append("\">").Append(Svg.Text(r.Shape.Name)).Append("</a></td>")
                .Append("<td><b>").Append(Svg.Text(r.Best.Strategy)).Append("</b></td>")
                .Append("<td>").Append(Svg.Text(r.Limit)).Append("</td>")
                .Append("<td>").Append(Svg.Text(r.RunnerUp?.Strategy ?? "-")).Append("</td>")
                .Append("<td class=\"").Append(SeedClass(r.SeedCheck)).Append("\">")
                .Append(Svg.Text(r.SeedCheck)).Append("</td></tr>");
        }

        html.Append("</tbody></table>");
        foreach (var r in recommendations)
        {
            html.Append("<details><summary>Evidence: ").Append(Svg.Text(r.Shape.Name)).Append("</summary><p>").Append(Svg.Text(r.Evidence)).Append("</p>");
            var quoted = r.Scenario with { Cases = r.Rows };
            HtmlTable.Append(html, ResultTable.For(quoted, wide: false));
            html.Append("</details>");
        }
    }

    private static string SeedClass(string seedCheck) =>
        seedCheck.StartsWith("Contradicts", StringComparison.Ordinal) ? "contradicts"
        : seedCheck.StartsWith("Agrees", StringComparison.Ordinal) ? "agrees"
        : "measured";
}
