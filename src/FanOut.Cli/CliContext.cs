using FanOut.Lab.Running;
using FanOut.Lab.Scenarios;

using Spectre.Console;

namespace FanOut.Cli;

/// <summary>Everything a command reads from the outside world, injected so tests see what a person would.</summary>
/// <param name="Console">Where results and progress go.</param>
/// <param name="Error">Where one-line errors go.</param>
/// <param name="Interactive">True on a terminal: colours and a live status line; false when redirected: plain lines.</param>
/// <param name="Catalog">The scenarios.</param>
/// <param name="Launcher">How to start a child process for one case.</param>
/// <param name="Clock">The time, for the default results folder name.</param>
public sealed record CliContext(
    IAnsiConsole Console,
    TextWriter Error,
    bool Interactive,
    ScenarioCatalog Catalog,
    Func<ChildProcessLauncher> Launcher,
    TimeProvider Clock);
