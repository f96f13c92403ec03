using System.CommandLine;
using System.CommandLine.Help;

using FanOut.Cli.Commands;

namespace FanOut.Cli;

/// <summary>The <c>fanout</c> command line: parse, report usage errors in one line with exit code 2, else invoke.</summary>
public static class FanOutCommandLine
{
    /// <summary>The command's name, as installed by <c>dotnet tool install FanOut.Cli</c> and shown in <c>--help</c>.</summary>
    public const string CommandName = "fanout";

    /// <summary>Runs <paramref name="args"/> against <paramref name="context"/>.</summary>
    public static async Task<int> InvokeAsync(string[] args, CliContext context, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(args);
        ArgumentNullException.ThrowIfNull(context);
        // Not a RootCommand: its name is the executable's (FanOut.Cli), while the installed tool's command is "fanout".
        var root = new Command(CommandName, "FanOut lab: runs the seed experiments on this machine and measures what each fan-out strategy really did.")
        {
            new HelpOption(),
            new VersionOption(),
        };
        root.Subcommands.Add(ListCommand.Create(context.Catalog, context.Console));
        root.Subcommands.Add(RunCommand.Create(context));
        root.Subcommands.Add(ServeCommand.Create(context));
        root.Subcommands.Add(ReportCommand.Create(context));
        root.Subcommands.Add(ProbeCommand.Create(context));
        root.Subcommands.Add(WatchCommand.Create(context));
        root.Subcommands.Add(ChildCommand.Create(context.Catalog, context.Error));

        var parse = root.Parse(args);
        if (parse.Errors.Count > 0)
        {
            // One line naming every bad token the parser saw, then the valid commands.
            var messages = string.Join("; ", parse.Errors.Select(e => e.Message.TrimEnd('.')).Distinct());
            var commands = string.Join(", ", root.Subcommands.Where(c => !c.Hidden).Select(c => c.Name));
            context.Error.WriteLine($"fanout: {messages}. Commands: {commands}; see 'fanout --help'.");
            return ExitCodes.Usage;
        }

        // ProcessTerminationTimeout null: signals are ShutdownSignals' job (one place), not the parser's.
        var configuration = new InvocationConfiguration { Output = new SpectreWriter(context.Console), Error = context.Error, ProcessTerminationTimeout = null };
        return await parse.InvokeAsync(configuration, cancellationToken).ConfigureAwait(false);
    }
}
