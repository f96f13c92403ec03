using System.Globalization;
using System.Text;

using Spectre.Console;
using Spectre.Console.Rendering;

namespace FanOut.Cli.Watch;

/// <summary>The live terminal view of <c>fanout watch</c>: a table of limits, a chart of the chosen one, and the decision log.</summary>
internal static class WatchView
{
    /// <summary>Decisions shown under the chart.</summary>
    public const int LogLines = 12;

    private const string Bars = "▁▂▃▄▅▆▇█";

    public static IRenderable Render(WatchTarget target, WatchModel model)
    {
        var interval = model.IntervalSeconds > 0 ? $" · every {Number(model.IntervalSeconds)} s" : string.Empty;
        var header = new Markup($"[bold]fanout watch[/] · process {Markup.Escape(target.ToString())} · {model.Rows.Count} limit{(model.Rows.Count == 1 ? string.Empty : "s")} in use{interval} · [grey]↑/↓ choose · q quits[/]");
        return new Rows(header, Table(model), Chart(model), Log(model));
    }

    /// <summary>One row per limit in use.</summary>
    internal static Table Table(WatchModel model)
    {
        var table = new Table().Border(TableBorder.Rounded).Expand();
        table.AddColumn("limit (name)");
        table.AddColumn("kind");
        table.AddColumn(new TableColumn("limit").RightAligned());
        table.AddColumn(new TableColumn("in flight").RightAligned());
        table.AddColumn(new TableColumn("waiting").RightAligned());
        table.AddColumn(new TableColumn("latency / baseline").RightAligned());
        table.AddColumn(new TableColumn("overloads/s").RightAligned());
        table.AddColumn(new TableColumn("pauses/s").RightAligned());
        table.AddColumn("last decision");
        var selected = model.Selected?.Id;
        foreach (var row in model.Rows)
        {
            var name = Markup.Escape(row.Name);
            table.AddRow(
                row.Id == selected ? $"[bold]> {name}[/]" : $"  {name}",
                Markup.Escape(row.Kind),
                row.Limit.ToString(CultureInfo.InvariantCulture),
                row.InFlight.ToString(CultureInfo.InvariantCulture),
                row.Waiting.ToString(CultureInfo.InvariantCulture),
                Latency(row),
                Number(row.OverloadsPerSecond),
                Number(row.PausesPerSecond),
                row.LastDecision is { } d ? Markup.Escape(Decision(d)) : "[grey]none yet[/]");
        }

        if (model.Rows.Count == 0)
        {
            table.AddRow("[grey]no limit in use yet: limits appear when a call, a wait or a change uses them[/]");
        }

        return table;
    }

    /// <summary>Limit and in flight of the chosen limit, one column per interval.</summary>
    internal static IRenderable Chart(WatchModel model)
    {
        if (model.Selected is not { } row || row.History.Count == 0)
        {
            return new Text(string.Empty);
        }

        var top = Math.Max(1, row.History.Max(p => Math.Max(p.Limit, p.InFlight)));
        var title = new Markup($"[bold]{Markup.Escape(row.Name)}[/]: limit and in flight over the last {row.History.Count} intervals (full bar: {top})");
        var chart = new Grid().AddColumn().AddColumn().AddColumn();
        chart.AddRow(new Text("limit"), new Markup($"[green]{Spark(row.History.Select(p => p.Limit), top)}[/]"), new Text(row.Limit.ToString(CultureInfo.InvariantCulture)));
        chart.AddRow(new Text("in flight"), new Markup($"[blue]{Spark(row.History.Select(p => p.InFlight), top)}[/]"), new Text(row.InFlight.ToString(CultureInfo.InvariantCulture)));
        return new Rows(title, chart);
    }

    /// <summary>The newest decisions, newest last.</summary>
    internal static IRenderable Log(WatchModel model)
    {
        var lines = model.Log.TakeLast(LogLines).Select(d => $"{Clock(d.Seconds)}  {Markup.Escape(d.Name)}  {Markup.Escape(Decision(d))}  {Markup.Escape(Evidence(d))}").ToList();
        var text = lines.Count == 0 ? "[grey]no decision yet[/]" : string.Join('\n', lines);
        return new Panel(new Markup(text)).Header("decisions (seconds since attached)").Border(BoxBorder.Rounded).Expand();
    }

    /// <summary>Seconds since attached, aligned: "  8.70 s".</summary>
    internal static string Clock(double seconds) => $"{seconds.ToString("0.00", CultureInfo.InvariantCulture),7} s";

    /// <summary>"12 -> 9 Overload".</summary>
    internal static string Decision(LimitChangedEvent d) => $"{d.From} -> {d.To} {d.Reason}";

    /// <summary>What the decision read: the window's median against the baseline, and the calls in flight.</summary>
    internal static string Evidence(LimitChangedEvent d)
    {
        var median = d.WindowMedianMs > 0 ? $"window median {Number(d.WindowMedianMs)} ms, " : string.Empty;
        var baseline = d.BaselineMs > 0 ? $"baseline {Number(d.BaselineMs)} ms, " : string.Empty;
        return $"({median}{baseline}{d.InFlight} in flight)";
    }

    internal static string Latency(LimitRow row) => (row.LatencyMs, row.BaselineMs) switch
    {
        ({ } latency, { } baseline) => $"{Number(latency)} / {Number(baseline)} ms",
        ({ } latency, null) => $"{Number(latency)} ms",
        (null, { } baseline) => $"- / {Number(baseline)} ms",
        _ => "-",
    };

    internal static string Spark(IEnumerable<int> values, int top)
    {
        var text = new StringBuilder();
        foreach (var value in values)
        {
            text.Append(value <= 0 ? ' ' : Bars[Math.Clamp((int)Math.Ceiling((double)value / top * Bars.Length) - 1, 0, Bars.Length - 1)]);
        }

        return text.ToString();
    }

    internal static string Number(double value) => value switch
    {
        0 => "0",
        < 10 => value.ToString("0.##", CultureInfo.InvariantCulture),
        < 100 => value.ToString("0.#", CultureInfo.InvariantCulture),
        _ => value.ToString("0", CultureInfo.InvariantCulture),
    };
}
