using System.CommandLine;

using FanOut.Lab.Probing;
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
        var pathArgument = new Argument<string>("results") { Description = "A results folder written by 'fanout run' or 'fanout probe', or its results.json or probe.json." };
        var outOption = new Option<string?>("--out") { Description = "The HTML file to write (default: report.html beside results.json)." };
        var command = new Command("report", "Render report.html (charts, timelines, recommendations) from a results folder or results.json.")
        {
            pathArgument, outOption,
        };
        command.SetAction(parse =>
        {
            var path = parse.GetValue(pathArgument)!;
            string? probeError = null;
            var probe = Directory.Exists(path) || Path.GetFileName(path) == ProbeReportFile.FileName ? ProbeReportFile.Read(path, out probeError) : null;
            if (probeError is not null)
            {
                context.Error.WriteLine($"fanout: {probeError}");
                return ExitCodes.Usage;
            }

            if (ProbeOnly(path, probe))
            {
                return WriteProbeOnly(context, path, probe!, parse.GetValue(outOption));
            }

            var results = ResultsLoader.Load(path, out var resultsFile, out var error);
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
                ResultsDirectory.WriteAtomically(full, HtmlReport.Write(results, context.Catalog.Scenarios.Select(s => s.Id).ToArray(), probe is null ? null : [new ProbeSection(probe)]));
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or ArgumentException or NotSupportedException)
            {
                context.Error.WriteLine($"fanout: --out '{target}' cannot be written ({ex.Message.TrimEnd('.')}): give a file path in a writable folder.");
                return ExitCodes.Usage;
            }

            var cases = results.Scenarios.Sum(s => s.Cases.Count);
            context.Console.WriteLine($"Wrote {Path.GetFullPath(target)}: {results.Scenarios.Count} scenario(s), {cases} case(s){(probe is null ? string.Empty : ", the probe")}.");
            return ExitCodes.Success;
        });
        return command;
    }

    /// <summary>True when <paramref name="path"/> holds a probe and no results.json (a folder <c>fanout probe</c> wrote, or its probe.json).</summary>
    private static bool ProbeOnly(string path, ProbeReport? probe) =>
        probe is not null && !(Directory.Exists(path) && File.Exists(Path.Combine(path, ResultsDirectory.ResultsJsonFile)));

    /// <summary>report.html for a probe alone, beside its probe.json unless <paramref name="outPath"/> says where.</summary>
    private static int WriteProbeOnly(CliContext context, string path, ProbeReport probe, string? outPath)
    {
        var folder = Directory.Exists(path) ? path : Path.GetDirectoryName(Path.GetFullPath(path))!;
        var target = outPath is { Length: > 0 } o ? o : Path.Combine(folder, ResultsDirectory.ReportHtml);
        try
        {
            var full = Path.GetFullPath(target);
            Directory.CreateDirectory(Path.GetDirectoryName(full)!);
            ResultsDirectory.WriteAtomically(full, HtmlReport.Page("FanOut probe report", [new ProbeSection(probe)]));
            context.Console.WriteLine($"Wrote {full}: the probe of {probe.Url}.");
            return ExitCodes.Success;
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or ArgumentException or NotSupportedException)
        {
            context.Error.WriteLine($"fanout: --out '{target}' cannot be written ({ex.Message.TrimEnd('.')}): give a file path in a writable folder.");
            return ExitCodes.Usage;
        }
    }
}
