using System.CommandLine;

using FanOut.Lab.Results;
using FanOut.Lab.Running;
using FanOut.Lab.Scenarios;

namespace FanOut.Cli.Commands;

/// <summary>The hidden <c>fanout child</c>: runs one case in this fresh process and writes its result as JSON for the parent.</summary>
public static class ChildCommand
{
    /// <summary>Builds the command.</summary>
    public static Command Create(ScenarioCatalog catalog, TextWriter error)
    {
        ArgumentNullException.ThrowIfNull(catalog);
        ArgumentNullException.ThrowIfNull(error);
        var scenarioOption = new Option<string>("--scenario") { Required = true };
        var caseOption = new Option<int>("--case") { Required = true };
        var scaleOption = new Option<double>("--scale") { DefaultValueFactory = _ => 1.0 };
        var fullOption = new Option<bool>("--full");
        var resultOption = new Option<string>("--result") { Required = true };
        var command = new Command(ChildProcessLauncher.ChildCommand, "Run one case in this process (used by fanout run).")
        {
            Hidden = true,
        };
        command.Options.Add(scenarioOption);
        command.Options.Add(caseOption);
        command.Options.Add(scaleOption);
        command.Options.Add(fullOption);
        command.Options.Add(resultOption);
        command.SetAction((parse, cancellationToken) =>
        {
            var scenarios = catalog.Select(parse.GetValue(scenarioOption)!, out var problem);
            var size = new ScenarioSize(parse.GetValue(scaleOption), parse.GetValue(fullOption));
            problem ??= ScenarioSize.ValidateScale(size.Scale);
            var cases = scenarios?[0].Cases(size);
            var index = parse.GetValue(caseOption);
            if (problem is null && (index < 0 || index >= cases!.Count))
            {
                problem = $"--case {index} is outside 0..{cases!.Count - 1}.";
            }

            if (problem is not null)
            {
                error.WriteLine($"fanout child: {problem}");
                return Task.FromResult(ExitCodes.Usage);
            }

            // Ctrl+C reaches the child too: the token stops the case at once and the runner's clean-up
            // (server stopped, temp files deleted) runs before the process exits.
            try
            {
                var result = new InProcessCaseRunner(RunPolicy.Default).Run(cases![index], cancellationToken);
                File.WriteAllText(parse.GetValue(resultOption)!, ResultsJson.Serialize(result));
                return Task.FromResult(ExitCodes.Success);
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                return Task.FromResult(ExitCodes.Canceled);
            }
        });
        return command;
    }
}
