using System.Globalization;

using FanOut.Lab.Results;
using FanOut.Lab.Running;
using FanOut.Lab.Scenarios;

using Spectre.Console;

namespace FanOut.Cli.Output;

/// <summary>Shows a run as it goes: a line per finished case, then the scenario's table and verdict.</summary>
/// <remarks>On a terminal the case lines are coloured and a status line shows the case running now; when the output
/// is redirected everything is plain text, one line per event, so logs and CI read cleanly.</remarks>
public sealed class ConsoleProgress(IAnsiConsole console, bool interactive) : ILabProgress
{
    /// <summary>Set on a terminal to show the case running now (drawn by the caller's status widget).</summary>
    public Action<string>? Status { get; set; }

    private TimeSpan? _left;

    /// <summary>The width the default output fits: compact tables are narrowed to it (long cells wrap), and so are the verdicts.</summary>
    public const int CompactWidth = 170;

    /// <summary>True to print every column on one line each; false (the default) prints the compact table, fitted to <see cref="CompactWidth"/>.</summary>
    public bool Wide { get; init; }

    /// <inheritdoc/>
    public void ScenarioStarted(Scenario scenario, ScenarioSize size, int caseCount)
    {
        ArgumentNullException.ThrowIfNull(scenario);
        ArgumentNullException.ThrowIfNull(size);
        console.WriteLine();
        var header = $"== {scenario.Id}: {scenario.Describe(size)}, scale {size.Scale.ToString("0.###", CultureInfo.InvariantCulture)}, {caseCount} cases";
        if (interactive)
        {
            console.MarkupLine($"[bold]{Markup.Escape(header)}[/]");
        }
        else
        {
            console.WriteLine(header);
        }
    }

    /// <inheritdoc/>
    public void RunEstimated(TimeSpan estimate, int caseCount) =>
        console.WriteLine($"Estimated duration: {Duration(estimate)} for {caseCount} case(s) (from each case's expected run time, run policy and start-up; the time left is shown as cases run).");

    /// <inheritdoc/>
    public void TimeLeft(TimeSpan remaining) => _left = remaining;

    /// <inheritdoc/>
    public void CaseStarted(Scenario scenario, LabCase labCase, int caseIndex, int caseCount)
    {
        ArgumentNullException.ThrowIfNull(labCase);
        Status?.Invoke($"[{caseIndex + 1}/{caseCount}] {labCase.Strategy.Name}, N={labCase.ItemCount}{LeftText()}");
    }

    /// <summary><c>4 min 05 s</c>, or <c>12 s</c> under a minute.</summary>
    public static string Duration(TimeSpan duration) => duration.TotalMinutes >= 1
        ? string.Create(CultureInfo.InvariantCulture, $"{(int)duration.TotalMinutes} min {duration.Seconds:00} s")
        : string.Create(CultureInfo.InvariantCulture, $"{Math.Max(0, (int)Math.Round(duration.TotalSeconds))} s");

    private string LeftText() => _left is { } left ? $" (~{Duration(left)} left)" : string.Empty;

    /// <inheritdoc/>
    public void CaseFinished(Scenario scenario, CaseResult result, int caseIndex, int caseCount)
    {
        ArgumentNullException.ThrowIfNull(result);
        var head = $"  [{caseIndex + 1}/{caseCount}]{LeftText()} {result.Strategy} {ResultTable.ParametersText(result.Parameters)}";
        var tail = !result.Succeeded
            ? $"FAILED: {result.Error}"
            : result.Outcome is { } outcome
                ? $"started {outcome.ItemsStarted.ToString("N0", CultureInfo.InvariantCulture)} ({outcome.StartedAfterTrigger.ToString("N0", CultureInfo.InvariantCulture)} after the failure or cancel), completed {outcome.Completed.ToString("N0", CultureInfo.InvariantCulture)}, stopped {(outcome.StopMs is { } stop ? ResultTable.Time(stop) : "-")} after it, {outcome.FinalState}, {outcome.RunningAtReturn.ToString("N0", CultureInfo.InvariantCulture)} still running"
            : result.Io is { } io
                ? $"{ResultTable.Time(result.MeanMs)}, {io.Successes.ToString("N0", CultureInfo.InvariantCulture)} ok ({io.SuccessesPerSecond.ToString("N0", CultureInfo.InvariantCulture)}/s), failed {ResultTable.FailuresText(io)}, {result.PeakInFlight.ToString("N0", CultureInfo.InvariantCulture)} in flight"
                : $"{ResultTable.Time(result.MeanMs)}, efficiency {result.Efficiency.ToString("0.00", CultureInfo.InvariantCulture)}, {result.PeakInFlight.ToString("N0", CultureInfo.InvariantCulture)} in flight";
        if (interactive)
        {
            var colour = result.Succeeded ? "green" : "red";
            console.MarkupLine($"{Markup.Escape(head)}: [{colour}]{Markup.Escape(tail)}[/]");
        }
        else
        {
            WriteWrapped($"{head}: {tail}");
        }
    }

    /// <inheritdoc/>
    public void ScenarioFinished(ScenarioResult result)
    {
        ArgumentNullException.ThrowIfNull(result);
        console.WriteLine();
        var table = ResultTable.For(result, Wide);
        console.WriteLine(TextTable.Render(table.Headers, table.Rows, table.RightAligned, Wide ? int.MaxValue : CompactWidth));
        foreach (var c in result.Cases.Where(c => c.Note is not null))
        {
            WriteWrapped($"{c.Strategy} ({ResultTable.ParametersText(c.Parameters)}): {c.Note}");
        }

        WriteWrapped($"Seed said: {result.SeedClaim}");
        WriteWrapped($"Here: {result.Verdict}");
    }

    /// <summary>A paragraph, word-wrapped at <see cref="CompactWidth"/> unless <see cref="Wide"/> (then one line, for grep).</summary>
    private void WriteWrapped(string paragraph)
    {
        foreach (var line in Wide ? [paragraph] : TextTable.Wrap(paragraph, CompactWidth))
        {
            console.WriteLine(line);
        }
    }
}
