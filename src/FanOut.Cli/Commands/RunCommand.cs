using System.CommandLine;

using FanOut.Cli.Output;
using FanOut.Lab.Results;
using FanOut.Lab.Running;
using FanOut.Lab.Scenarios;

using Spectre.Console;

namespace FanOut.Cli.Commands;

/// <summary><c>fanout run &lt;scenario&gt;|all</c>: parse, validate, then run every case and save the results as they come.</summary>
public static class RunCommand
{
    /// <summary>Builds the command.</summary>
    public static Command Create(CliContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        var scenarioArgument = new Argument<string>("scenario")
        {
            Description = $"A scenario id (see 'fanout list') or '{ScenarioCatalog.All}'.",
        };
        var scaleOption = NumberOption.Create("--scale", "Shrink per-item time and work by this factor, 0 < F <= 1 (default 1).", "use a number greater than 0 and at most 1, e.g. 0.25");
        var fullOption = new Option<bool>("--full") { Description = "Run the seeds' exact grids instead of the default subsets." };
        var inProcessOption = new Option<bool>("--in-process") { Description = "Run every case in this process (quick look; cases then share one thread pool)." };
        var outOption = new Option<string?>("--out") { Description = "Results folder (default fanout-results/<timestamp>)." };
        var aotOption = new Option<bool>("--aot") { Description = "Also run seed002-channels in a NativeAOT-published child (published on first use, then cached)." };
        var trimmedOption = new Option<bool>("--trimmed") { Description = "Also run seed002-channels in a trimmed self-contained child (published on first use, then cached)." };
        var timeoutOption = NumberOption.Create("--timeout", "Seconds one case may run before its child process is killed (default 300).", "use a positive number of seconds, e.g. 600");
        var wideOption = new Option<bool>("--wide") { Description = "Print every column in the console tables (default: a compact table fitted to 170 columns, long cells and verdicts wrapped)." };
        var command = new Command("run", "Run a scenario (or all) and write results.json, results.csv, report.md and report.html.")
        {
            scenarioArgument, scaleOption, fullOption, inProcessOption, outOption, timeoutOption, wideOption, aotOption, trimmedOption,
        };
        command.SetAction(async (parse, cancellationToken) =>
        {
            var settings = RunSettings.Validate(
                context.Catalog,
                parse.GetValue(scenarioArgument)!,
                parse.GetValue(scaleOption),
                parse.GetValue(fullOption),
                parse.GetValue(inProcessOption),
                parse.GetValue(outOption),
                parse.GetValue(timeoutOption),
                context.Clock.GetUtcNow(),
                out var error)?.WithVariants(parse.GetValue(aotOption), parse.GetValue(trimmedOption), out error);
            if (settings is null)
            {
                context.Error.WriteLine($"fanout: {error}");
                return ExitCodes.Usage;
            }

            settings = settings with { Wide = parse.GetValue(wideOption) };
            var output = ResultsDirectory.Open(settings.OutPath, out error);
            if (output is null)
            {
                context.Error.WriteLine($"fanout: {error}");
                return ExitCodes.Usage;
            }

            return await RunAsync(context, settings, output, cancellationToken).ConfigureAwait(false);
        });
        return command;
    }

    private static async Task<int> RunAsync(CliContext context, RunSettings settings, ResultsDirectory output, CancellationToken cancellationToken)
    {
        var console = context.Console;
        var mode = settings.InProcess ? "in this process" : "one child process per case";
        console.WriteLine($"FanOut lab: {settings.Scenarios.Count} scenario(s), scale {settings.Size.Scale:0.###}{(settings.Size.Full ? ", full grids" : string.Empty)}, {mode}, {Environment.ProcessorCount} logical processors.");
        console.WriteLine($"Results: {output.Path}");
        ICaseRunner caseRunner = settings.InProcess
            ? new InProcessScenarioCaseRunner(RunPolicy.Default)
            : new ChildProcessCaseRunner(context.Launcher(), settings.CaseTimeout);
        if (settings.Variants.Count > 0)
        {
            (settings, caseRunner) = PublishedRuns.Prepare(context, settings, caseRunner, cancellationToken);
        }

        var progress = new ConsoleProgress(console, context.Interactive) { Wide = settings.Wide };
        var runner = new LabRunner(caseRunner, output, progress)
        {
            Estimate = new RunEstimate(RunPolicy.Default, settings.InProcess ? TimeSpan.Zero : RunEstimate.ChildCaseOverhead)
            {
                MachineSlowdown = MachineSpeed.Measure(),
            },
        };
        LabResults results;
        if (context.Interactive)
        {
            results = await console.Status().StartAsync("starting", async status =>
            {
                progress.Status = text => status.Status(Markup.Escape(text));
                return await runner.RunAsync(settings.Scenarios, settings.Size, cancellationToken).ConfigureAwait(false);
            }).ConfigureAwait(false);
        }
        else
        {
            results = await runner.RunAsync(settings.Scenarios, settings.Size, cancellationToken).ConfigureAwait(false);
        }

        console.WriteLine();
        console.WriteLine($"Wrote results.json, results.csv, report.md and report.html to {output.Path}");
        if (cancellationToken.IsCancellationRequested)
        {
            context.Error.WriteLine("fanout: interrupted; the cases that finished are saved.");
            return ExitCodes.Canceled;
        }

        var failed = results.Scenarios.SelectMany(s => s.Cases).Count(c => !c.Succeeded);
        if (failed > 0)
        {
            context.Error.WriteLine($"fanout: {failed} case(s) failed; their reasons are in the tables and in results.json.");
            return ExitCodes.CasesFailed;
        }

        return ExitCodes.Success;
    }
}
