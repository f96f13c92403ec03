using System.CommandLine;

using FanOut.Lab.Scenarios;

using Spectre.Console;

namespace FanOut.Cli.Commands;

/// <summary><c>fanout list</c>: the scenarios, their seed and their size.</summary>
public static class ListCommand
{
    /// <summary>Builds the command.</summary>
    public static Command Create(ScenarioCatalog catalog, IAnsiConsole console)
    {
        ArgumentNullException.ThrowIfNull(catalog);
        ArgumentNullException.ThrowIfNull(console);
        var command = new Command("list", "List the scenarios, the seed each reproduces and its default size.");
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

    /// <summary>One line per scenario, its columns (id, seed file) padded to the longest value so every description starts in one column.</summary>
    public static IReadOnlyList<string> Lines(ScenarioCatalog catalog)
    {
        ArgumentNullException.ThrowIfNull(catalog);
        var idWidth = catalog.Scenarios.Max(s => s.Id.Length);
        var seedWidth = catalog.Scenarios.Max(s => s.Seed.File.Length);
        return catalog.Scenarios.Select(scenario =>
        {
            var cases = scenario.Cases(ScenarioSize.Default).Count;
            var full = scenario.Cases(new ScenarioSize(1, Full: true)).Count;
            return $"{scenario.Id.PadRight(idWidth)}  seed {scenario.Seed.File.PadRight(seedWidth)}  {scenario.Describe(ScenarioSize.Default)}; {cases} cases ({full} with --full)";
        }).ToArray();
    }
}
