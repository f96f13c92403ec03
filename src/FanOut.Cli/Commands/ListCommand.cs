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
            foreach (var scenario in catalog.Scenarios)
            {
                var cases = scenario.Cases(ScenarioSize.Default).Count;
                var full = scenario.Cases(new ScenarioSize(1, Full: true)).Count;
                console.WriteLine($"{scenario.Id,-20} seed {scenario.Seed.File,-26} {scenario.Describe(ScenarioSize.Default)}; {cases} cases ({full} with --full)");
            }

            return ExitCodes.Success;
        });
        return command;
    }
}
