using FanOut.Cli;
using FanOut.Lab.Running;
using FanOut.Lab.Scenarios;

using Spectre.Console;

namespace FanOut.Cli.Tests;

/// <summary>Runs the real command line against a recording console, as a person at a redirected terminal would see it.</summary>
public sealed class CliHarness
{
    private readonly StringWriter _out = new();

    public StringWriter Error { get; } = new();

    public string Output => _out.ToString();

    public Task<int> RunAsync(params string[] args) => RunAsync(CancellationToken.None, args);

    /// <summary>Runs <paramref name="args"/>; cancelling <paramref name="cancellationToken"/> is what Ctrl+C does.</summary>
    public async Task<int> RunAsync(CancellationToken cancellationToken, params string[] args)
    {
        var console = AnsiConsole.Create(new AnsiConsoleSettings
        {
            Ansi = AnsiSupport.No,
            ColorSystem = ColorSystemSupport.NoColors,
            Out = new AnsiConsoleOutput(_out),
        });
        console.Profile.Width = 10_000;
        var context = new CliContext(console, Error, Interactive: false, ScenarioCatalog.Default, LaunchBuiltCli, TimeProvider.System);
        return await FanOutCommandLine.InvokeAsync(args, context, cancellationToken);
    }

    /// <summary>The FanOut.Cli.dll built beside the tests, started through dotnet, as the child process.</summary>
    private static ChildProcessLauncher LaunchBuiltCli() =>
        new("dotnet", [Path.Combine(AppContext.BaseDirectory, "FanOut.Cli.dll")]);

    /// <summary>The contract for bad input: exit code 2, one line on stderr naming every text in <paramref name="mustName"/>.</summary>
    public void AssertUsageError(int exit, params string[] mustName)
    {
        Assert.Equal(2, exit);
        var error = Error.ToString().TrimEnd();
        Assert.DoesNotContain("\n", error, StringComparison.Ordinal);
        foreach (var text in mustName)
        {
            Assert.Contains(text, error, StringComparison.Ordinal);
        }
    }
}
