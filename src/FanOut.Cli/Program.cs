using FanOut.Cli;
using FanOut.Lab.Running;
using FanOut.Lab.Scenarios;

using Spectre.Console;

var interactive = !Console.IsOutputRedirected;
var console = AnsiConsole.Create(new AnsiConsoleSettings
{
    Ansi = interactive ? AnsiSupport.Detect : AnsiSupport.No,
    ColorSystem = interactive ? ColorSystemSupport.Detect : ColorSystemSupport.NoColors,
    Out = new AnsiConsoleOutput(Console.Out),
});
if (!interactive)
{
    // Redirected output has no width; without this, tables would wrap at 80 columns in logs.
    console.Profile.Width = 10_000;
}

using var signals = new ShutdownSignals();

var context = new CliContext(console, Console.Error, interactive, ScenarioCatalog.Default, ChildProcessLauncher.ForCurrentProcess, TimeProvider.System);
return await FanOutCommandLine.InvokeAsync(args, context, signals.Token);
