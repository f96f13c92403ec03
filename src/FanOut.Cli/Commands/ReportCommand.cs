using System.CommandLine;

using FanOut.Lab.Reports.Html;
using FanOut.Lab.Results;

using Spectre.Console;

namespace FanOut.Cli.Commands;

/// <summary><c>fanout report &lt;dir|results.json&gt; [--out FILE]</c>: renders report.html again from saved results.</summary>
public static class ReportCommand
{
    /// <summary>Builds the command.</summary>
    public static Command Create(CliContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        var pathArgument = new Argument<string>("results") { Description = "A results folder written by 'fanout run', or its results.json." };
        var outOption = new Option<string?>("--out") { Description = "The HTML file to write (default: report.html beside results.json)." };
        var command = new Command("report", "Render report.html (charts, timelines, recommendations) from a results folder or results.json.")
        {
            pathArgument, outOption,
        };
        command.SetAction(parse =>
        {
            var results = ResultsLoader.Load(parse.GetValue(pathArgument)!, out var resultsFile, out var error);
            if (results is null)
            {
                context.Error.WriteLine($"fanout: {error}");
                return ExitCodes.Usage;
            }

            var target = parse.GetValue(outOption) is { Length: > 0 } o ? o : Path.Combine(Path.GetDirectoryName(Path.GetFullPath(resultsFile))!, ResultsDirectory.ReportHtml);
            try
            {
                var full = Path.GetFullPath(target);
                Directory.CreateDirectory(Path.GetDirectoryName(full)!);
                ResultsDirectory.WriteAtomically(full, HtmlReport.Write(results, context.Catalog.Scenarios.Select(s => s.Id).ToArray()));
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or ArgumentException or NotSupportedException)
            {
                context.Error.WriteLine($"fanout: --out '{target}' cannot be written ({ex.Message.TrimEnd('.')}): give a file path in a writable folder.");
                return ExitCodes.Usage;
            }

            var cases = results.Scenarios.Sum(s => s.Cases.Count);
            context.Console.WriteLine($"Wrote {Path.GetFullPath(target)}: {results.Scenarios.Count} scenario(s), {cases} case(s).");
            return ExitCodes.Success;
        });
        return command;
    }
}
