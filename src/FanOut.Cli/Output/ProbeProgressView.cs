using System.Globalization;

using FanOut.Lab.Probing;

using Spectre.Console;

namespace FanOut.Cli.Output;

/// <summary>Shows a probe as it goes: a line per level and per step; on a terminal also a live status line.</summary>
/// <param name="console">Where the lines go.</param>
/// <param name="live">On a terminal: coloured lines and a status line (drawn by the caller's status widget).</param>
/// <param name="quiet">Print nothing (<c>--json</c>).</param>
public sealed class ProbeProgressView(IAnsiConsole console, bool live, bool quiet) : IProbeProgress
{
    /// <summary>True when the caller should draw a live status line.</summary>
    public bool Live => live && !quiet;

    /// <summary>Set on a terminal to show the level running now.</summary>
    public Action<string>? Status { get; set; }

    /// <inheritdoc/>
    public void LevelStarted(int concurrency) =>
        Status?.Invoke($"measuring {concurrency.ToString(CultureInfo.InvariantCulture)} at once");

    /// <inheritdoc/>
    public void LevelFinished(LevelResult level, LevelVerdict verdict)
    {
        ArgumentNullException.ThrowIfNull(level);
        ArgumentNullException.ThrowIfNull(verdict);
        if (quiet)
        {
            return;
        }

        var head = $"  {level.Concurrency,5} at once: {level.Requests.ToString("N0", CultureInfo.InvariantCulture)} requests, {ProbeText.Rate(level.OkPerSecond)} ok/s, p99 {ProbeText.Ms(level.LatencyP99Ms)}, failures {ProbeSummary.FailuresText(level)}";
        var tail = verdict.Reason is null ? string.Empty : $": {verdict.Reason}";
        if (live)
        {
            var colour = !verdict.Clean ? "red" : verdict.Stop ? "yellow" : "green";
            console.MarkupLine($"[{colour}]{Markup.Escape(head)}[/]{Markup.Escape(tail)}");
        }
        else
        {
            console.WriteLine(head + tail);
        }
    }

    /// <inheritdoc/>
    public void Note(string message)
    {
        if (!quiet)
        {
            console.WriteLine($"  {message}");
        }
    }
}
