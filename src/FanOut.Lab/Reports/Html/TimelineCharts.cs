using System.Globalization;
using System.Text;

using FanOut.Lab.Reports.Charts;
using FanOut.Lab.Results;

namespace FanOut.Lab.Reports.Html;

/// <summary>The timelines of a scenario's cases: items in flight, threads and queue, the adaptive limit and its decisions, and for real I/O completions and refusals (429s, or a protected service's 503s) over time.</summary>
public static class TimelineCharts
{
    /// <summary>A chart has about this many pixels across: more points than this are merged (keeping each bucket's peak).</summary>
    private const int MaxDrawnPoints = 400;

    /// <summary>A card's charts are smaller than the overview's, so three fit side by side.</summary>
    private const double CardChartWidth = 380;

    private const double CardChartHeight = 200;

    private const string InFlightColor = "#1f77b4";
    private const string LimitColor = "#ff7f0e";
    private const string ServerColor = "#2ca02c";
    private const string PoolColor = "#9467bd";
    private const string OsColor = "#8c564b";
    private const string QueueColor = "#7f7f7f";
    private const string CompletedColor = "#2ca02c";
    private const string RejectedColor = "#d62728";

    /// <summary>The reason of slow start's steps: counted in the legend, not marked (there are many, and the limit line shows them).</summary>
    private const string SlowStartGrowth = nameof(LimitChangeReason.SlowStartGrowth);

    /// <summary>A colour per reason of a limit's change; a reason not listed (added later) is drawn dark grey.</summary>
    private static readonly Dictionary<string, string> s_reasonColors = new(StringComparer.Ordinal)
    {
        [nameof(LimitChangeReason.Overload)] = "#d62728",
        [nameof(LimitChangeReason.QueueSeen)] = "#e377c2",
        [nameof(LimitChangeReason.RetryAfterPause)] = "#8c564b",
        [nameof(LimitChangeReason.PauseEnded)] = "#17becf",
        [nameof(LimitChangeReason.PauseLifted)] = "#9edae5",
        [nameof(LimitChangeReason.Growth)] = "#2ca02c",
        [nameof(LimitChangeReason.Probe)] = "#1f9e89",
        [nameof(LimitChangeReason.Remeasure)] = "#7f7f7f",
        [nameof(LimitChangeReason.RemeasureDone)] = "#555555",
    };

    /// <summary>Appends an overview (every strategy's in-flight line) and one card of charts per case that has a timeline.</summary>
    public static void Append(StringBuilder html, IReadOnlyList<CaseResult> cases, CaseLabels labels)
    {
        ArgumentNullException.ThrowIfNull(html);
        ArgumentNullException.ThrowIfNull(cases);
        ArgumentNullException.ThrowIfNull(labels);
        var timed = cases.Where(c => c.Timeline is { TimeMs.Count: > 0 }).ToArray();
        if (timed.Length == 0)
        {
            html.Append("<p class=\"no-chart\">No timelines in this file (written before the lab recorded them, or every case failed).</p>");
            return;
        }

        html.Append("<h3>Over time (the median run of each case, sampled from its start every 1 ms)</h3>");
        var behind = timed.Select(c => (Case: c, Why: c.Timeline!.SamplerFellBehind())).Where(x => x.Why is not null).ToArray();
        if (behind.Length > 0)
        {
            html.Append("<p class=\"note sampler\">Not every timeline kept that promise: ")
                .Append(Svg.Text(string.Join("; ", behind.Select(x => $"{labels[x.Case]}: {x.Why}"))))
                .Append(". Read those lines as coarser than 1 ms.</p>");
        }

        html.Append("<div class=\"charts\">");
        html.Append(LineChart.Render(
            "Items in flight over time, every strategy",
            "ms since the run started",
            "items in flight",
            timed.Select(c => Step(labels[c], Palette.Series(labels.Family(c)), c.Timeline!, c.Timeline!.InFlight.Select(v => (double)v).ToArray())).ToArray()));
        html.Append(LineChart.Render(
            "Thread-pool threads over time, every strategy",
            "ms since the run started",
            "pool threads",
            timed.Select(c => Step(labels[c], Palette.Series(labels.Family(c)), c.Timeline!, c.Timeline!.PoolThreads.Select(v => (double)v).ToArray())).ToArray()));
        html.Append("</div><div class=\"cards\">");
        foreach (var c in timed)
        {
            var t = c.Timeline!;
            html.Append("<div class=\"card\"><h4>").Append(Svg.Text(labels[c])).Append("</h4>");
            if (t.SamplerFellBehind() is { } why)
            {
                html.Append("<p class=\"note sampler\">").Append(Svg.Text(char.ToUpperInvariant(why[0]) + why[1..])).Append(".</p>");
            }

            html.Append("<div class=\"charts\">");
            var concurrency = new List<Series> { Step("in flight", InFlightColor, t, t.InFlight.Select(v => (double)v).ToArray()) };
            if (t.Limit is { } limit)
            {
                concurrency.Add(Step("limit (adaptive)", LimitColor, t, limit.Select(v => (double)v).ToArray()) with { Dashed = true });
            }

            if (t.ServerInFlight is { } server)
            {
                concurrency.Add(Step("server serving", ServerColor, t, server.Select(v => (double)v).ToArray()));
            }

            var marks = t.Limit is null ? null : DecisionMarks(t);
            html.Append(LineChart.Render(t.Limit is null ? "In flight" : "In flight and the adaptive limit", "ms", "items", concurrency, logX: false, logY: false, CardChartWidth, CardChartHeight, marks));
            html.Append(LineChart.Render(
                "Threads and pool queue",
                "ms",
                "count",
                [
                    Step("pool threads", PoolColor, t, t.PoolThreads.Select(v => (double)v).ToArray()),
                    Step("OS threads", OsColor, t, t.OsThreads.Select(v => (double)v).ToArray()),
                    Step("queue length", QueueColor, t, t.QueueLength.Select(v => (double)v).ToArray()),
                ],
                logX: false,
                logY: false,
                CardChartWidth,
                CardChartHeight));
            if (t.Completed is { } completed)
            {
                var rates = new List<Series> { Step("ok/s", CompletedColor, t, PerSecond(t, completed)) };
                if (t.Rejected is { } rejected && rejected.Any(r => r > 0))
                {
                    rates.Add(Step("refused/s (429 or 503)", RejectedColor, t, PerSecond(t, rejected)));
                }

                html.Append(LineChart.Render("Completions and refusals per second", "ms", "per second", rates, logX: false, logY: false, CardChartWidth, CardChartHeight));
            }

            html.Append("</div>");
            AppendDecisionLegend(html, t);
            html.Append("</div>");
        }

        html.Append("</div>");
    }

    /// <summary>The tooltip of a decision: <c>1234.5 ms: 40 -> 28, Overload (window median 12.3 ms, baseline 10.1 ms)</c>.</summary>
    public static string DecisionText(LimitDecision decision)
    {
        ArgumentNullException.ThrowIfNull(decision);
        var steps = decision.Steps > 1 ? $" ({decision.Steps} steps)" : string.Empty;
        return $"{Ms(decision.TimeMs)} ms: {decision.From} -> {decision.To}, {decision.Reason}{steps} " +
            $"(window median {(decision.WindowMedianMs > 0 ? Ms(decision.WindowMedianMs) + " ms" : "not read")}, " +
            $"baseline {(decision.BaselineMs > 0 ? Ms(decision.BaselineMs) + " ms" : "not measured")})";
    }

    /// <summary>A mark on the limit line at every decision but slow start's steps; null when the timeline has none.</summary>
    private static ChartMark[]? DecisionMarks(Timeline t) =>
        t.Decisions?.Where(d => d.Reason != SlowStartGrowth)
            .Select(d => new ChartMark(d.TimeMs, d.To, s_reasonColors.GetValueOrDefault(d.Reason, "#333333"), DecisionText(d), d.To < d.From, d.Reason))
            .ToArray();

    /// <summary>One line under a card counting the limit's decisions by reason, most frequent first; nothing for a timeline without decisions.</summary>
    private static void AppendDecisionLegend(StringBuilder html, Timeline t)
    {
        if (t.Decisions is not { } decisions)
        {
            return;
        }

        html.Append("<p class=\"note decisions\">Limit decisions by reason: ");
        var counts = decisions.GroupBy(d => d.Reason, StringComparer.Ordinal)
            .Select(g => (Reason: g.Key, Count: g.Sum(d => d.Steps)))
            .OrderByDescending(c => c.Count)
            .ThenBy(c => c.Reason, StringComparer.Ordinal)
            .ToArray();
        if (counts.Length == 0)
        {
            html.Append("none, the limit held where it started");
        }

        for (var i = 0; i < counts.Length; i++)
        {
            var (reason, count) = counts[i];
            html.Append(i == 0 ? string.Empty : ", ");
            if (reason != SlowStartGrowth)
            {
                html.Append("<span class=\"reason\" style=\"color:").Append(s_reasonColors.GetValueOrDefault(reason, "#333333")).Append("\">&#9650;</span>");
            }

            html.Append(Svg.Text(reason)).Append(' ').Append(count.ToString(CultureInfo.InvariantCulture));
        }

        if (t.DecisionsDropped is > 0 and var dropped)
        {
            html.Append(", ").Append(dropped.ToString(CultureInfo.InvariantCulture)).Append(" more not kept");
        }

        html.Append(counts.Any(c => c.Reason != SlowStartGrowth) ? ". Each is a triangle on the limit line (hover it for why); slow start's steps are not marked.</p>" : ".</p>");
    }

    private static string Ms(double ms) => ms.ToString("0.#", CultureInfo.InvariantCulture);

    /// <summary>A step series of <paramref name="values"/> against the timeline's time, merged to at most <see cref="MaxDrawnPoints"/> (each bucket's peak).</summary>
    private static Series Step(string name, string color, Timeline t, double[] values)
    {
        var times = t.TimeMs;
        if (values.Length <= MaxDrawnPoints)
        {
            return new Series(name, color, times.ToArray(), values, Step: true);
        }

        var bucket = (int)Math.Ceiling(values.Length / (double)MaxDrawnPoints);
        var x = new List<double>();
        var y = new List<double>();
        for (var i = 0; i < values.Length; i += bucket)
        {
            var end = Math.Min(values.Length, i + bucket);
            x.Add(times[end - 1]);
            y.Add(values[i..end].Max());
        }

        return new Series(name, color, x, y, Step: true);
    }

    private static double[] PerSecond(Timeline t, IReadOnlyList<long> counts)
    {
        var rates = new double[counts.Count];
        for (var i = 0; i < counts.Count; i++)
        {
            var span = t.TimeMs[i] - (i == 0 ? 0 : t.TimeMs[i - 1]);
            rates[i] = span > 0 ? counts[i] * 1000 / span : 0;
        }

        return rates;
    }
}
