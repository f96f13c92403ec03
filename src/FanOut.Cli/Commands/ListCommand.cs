using System.CommandLine;

using FanOut.Lab.Scenarios;

using Spectre.Console;

namespace FanOut.Cli.Commands;

/// <summary><c>fanout list</c>: the scenarios, what each finds out, what it runs and its size.</summary>
public static class ListCommand
{
    /// <summary>Builds the command.</summary>
    public static Command Create(ScenarioCatalog catalog, IAnsiConsole console)
    {
        ArgumentNullException.ThrowIfNull(catalog);
        ArgumentNullException.ThrowIfNull(console);
        var command = new Command("list", "List the scenarios: what each finds out, what it runs and how many cases.");
        command.SetAction(_ =>
        {
            foreach (var line in Lines(catalog))
            {
                console.WriteLine(line);
            }

            return ExitCodes.Success;
        });
        return command;
    }

    /// <summary>Two lines per scenario: its id and what it finds out, then (indented to the same column) what it runs and how many cases.</summary>
    /// <remarks>The seed file a scenario reproduces is in <c>report.md</c> and <c>docs/lab.md</c>: its name is a hash, which tells a person choosing a scenario nothing.</remarks>
    public static IReadOnlyList<string> Lines(ScenarioCatalog catalog)
    {
        ArgumentNullException.ThrowIfNull(catalog);
        var idWidth = catalog.Scenarios.Max(s => s.Id.Length);
        var indent = new string(' ', idWidth + 2);
        return catalog.Scenarios.SelectMany(scenario =>
        {
            var cases = scenario.Cases(ScenarioSize.Default).Count;
            var full = scenario.Cases(new ScenarioSize(1, Full: true)).Count;
            var size = full == cases ? $"{cases} cases" : $"{cases} cases ({full} with --full)";
            return new[]
            {
                $"{scenario.Id.PadRight(idWidth)}  {scenario.Purpose}",
                $"{indent}{scenario.Describe(ScenarioSize.Default)}; {size}",
            };
        }).ToArray();
    }
}
