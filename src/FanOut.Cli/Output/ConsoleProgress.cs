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
    public void CaseStarted(Scenario scenario, LabCase labCase, int caseIndex, int caseCount)
    {
        ArgumentNullException.ThrowIfNull(labCase);
        Status?.Invoke($"[{caseIndex + 1}/{caseCount}] {labCase.Strategy.Name}, N={labCase.ItemCount}");
    }

    /// <inheritdoc/>
    public void CaseFinished(Scenario scenario, CaseResult result, int caseIndex, int caseCount)
    {
        ArgumentNullException.ThrowIfNull(result);
        var head = $"  [{caseIndex + 1}/{caseCount}] {result.Strategy} {ResultTable.ParametersText(result.Parameters)}";
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
            console.WriteLine($"{head}: {tail}");
        }
    }

    /// <inheritdoc/>
    public void ScenarioFinished(ScenarioResult result)
    {
        ArgumentNullException.ThrowIfNull(result);
        console.WriteLine();
        var table = ResultTable.For(result);
        console.WriteLine(TextTable.Render(table.Headers, table.Rows, table.RightAligned));
        console.WriteLine($"Seed said: {result.SeedClaim}");
        console.WriteLine($"Here: {result.Verdict}");
    }
}
