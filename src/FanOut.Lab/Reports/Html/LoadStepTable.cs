using System.Globalization;
using System.Text;

using FanOut.Lab.Reports.Charts;
using FanOut.Lab.Results;

namespace FanOut.Lab.Reports.Html;

/// <summary>The per-load table of a scenario whose cases step a server through loads (server-overload): one row per case and load.</summary>
public static class LoadStepTable
{
    private static readonly (string Header, string Legend)[] s_columns =
    [
        ("Row", "how the service protects itself"),
        ("Load", "offered load as a multiple of the backend's capacity"),
        ("Offered/s", "arrivals per second (open loop: on a schedule, whatever the server does)"),
        ("Goodput/s", "200s within the SLO per second"),
        ("p50", "median latency of admitted requests (200s), from each request's intended start"),
        ("p99", "99th-percentile latency of admitted requests"),
        ("Refused", "share refused at once (503 with Retry-After)"),
        ("No answer", "share with no answer within the client's timeout (the client then aborts)"),
        ("Critical ok", "share of the critical requests (every fifth) answered 200; only the priorities row treats them differently"),
        ("Mean limit", "the adaptive limit's mean over the counted stretch"),
    ];

    /// <summary>Appends the table when any case of <paramref name="cases"/> carries load steps.</summary>
    public static void Append(StringBuilder html, IReadOnlyList<CaseResult> cases)
    {
        ArgumentNullException.ThrowIfNull(html);
        ArgumentNullException.ThrowIfNull(cases);
        var stepped = cases.Where(c => c.Io?.LoadSteps is { Count: > 0 }).ToArray();
        if (stepped.Length == 0)
        {
            return;
        }

        html.Append("<h3>By load</h3><div class=\"table-wrap\"><table><thead><tr>");
        foreach (var (header, legend) in s_columns)
        {
            html.Append("<th title=\"").Append(Svg.Text(legend)).Append("\">").Append(Svg.Text(header)).Append("</th>");
        }

        html.Append("</tr></thead><tbody>");
        foreach (var c in stepped)
        {
            foreach (var s in c.Io!.LoadSteps!)
            {
                string[] cells =
                [
                    c.Strategy,
                    Invariant($"{s.LoadFactor:0.##}x"),
                    Invariant($"{s.OfferedPerSecond:0}"),
                    Invariant($"{s.GoodputPerSecond:0.0}"),
                    s.P50Ms is { } p50 ? Invariant($"{p50:0} ms") : "-",
                    s.P99Ms is { } p99 ? Invariant($"{p99:0} ms") : "-",
                    Invariant($"{s.RefusedShare:P0}"),
                    Invariant($"{s.FailedShare:P0}"),
                    Invariant($"{s.CriticalSuccess:P1}"),
                    s.MeanLimit is { } limit ? Invariant($"{limit:0.0}") : "-",
                ];
                html.Append("<tr>");
                for (var i = 0; i < cells.Length; i++)
                {
                    html.Append(i == 0 ? "<td>" : "<td class=\"num\">").Append(Svg.Text(cells[i])).Append("</td>");
                }

                html.Append("</tr>");
            }
        }

        html.Append("</tbody></table></div>");
    }

    private static string Invariant(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);
}
