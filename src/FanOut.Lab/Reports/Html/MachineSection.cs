using System.Globalization;
using System.Text;

using FanOut.Lab.Reports.Charts;
using FanOut.Lab.Results;

namespace FanOut.Lab.Reports.Html;

/// <summary>Where the numbers came from: the machine, when, and the exact command that reproduces the run.</summary>
public sealed class MachineSection(LabResults results, IReadOnlyList<string> allScenarioIds) : IReportSection
{
    /// <inheritdoc/>
    public string Id => "machine";

    /// <inheritdoc/>
    public string Title => "Machine and how to reproduce";

    /// <summary>The command that runs the same scenarios at the same size; one per scenario when they are not all of them.</summary>
    public static IReadOnlyList<string> ReproduceCommands(LabResults results, IReadOnlyList<string> allScenarioIds)
    {
        ArgumentNullException.ThrowIfNull(results);
        ArgumentNullException.ThrowIfNull(allScenarioIds);
        if (results.Scenarios.Count == 0)
        {
            return [];
        }

        var first = results.Scenarios[0];
        var size = (first.Scale == 1 ? string.Empty : $" --scale {first.Scale.ToString("0.###", CultureInfo.InvariantCulture)}") + (first.Full ? " --full" : string.Empty);
        const string Run = "dotnet run -c Release --project src/FanOut.Cli -- run ";
        var ids = results.Scenarios.Select(s => s.Id).ToArray();
        return ids.Length > 1 && ids.SequenceEqual(allScenarioIds.Take(ids.Length))
            ? [Run + "all" + size + (ids.Length < allScenarioIds.Count ? "    # interrupted after " + ids[^1] : string.Empty)]
            : ids.Select(id => Run + id + size).ToArray();
    }

    /// <inheritdoc/>
    public void Write(StringBuilder html)
    {
        ArgumentNullException.ThrowIfNull(html);
        var m = results.Machine;
        var cases = results.Scenarios.Sum(s => s.Cases.Count);
        html.Append("<dl class=\"machine\">")
            .Append("<dt>Processor</dt><dd>").Append(Svg.Text(m.Processor)).Append("</dd>")
            .Append("<dt>Cores</dt><dd>").Append(m.ProcessorCount).Append(" logical (parallel speed-ups top out at ").Append(m.ProcessorCount).Append("x; the seeds ran on 16 to 20)</dd>")
            .Append("<dt>OS</dt><dd>").Append(Svg.Text(m.Os)).Append("</dd>")
            .Append("<dt>.NET</dt><dd>").Append(Svg.Text(m.DotnetVersion)).Append("</dd>")
            .Append("<dt>Started</dt><dd>").Append(results.StartedAt.ToString("u", CultureInfo.InvariantCulture)).Append("</dd>")
            .Append("<dt>Measured</dt><dd>").Append(results.Scenarios.Count).Append(" scenario(s), ").Append(cases).Append(" case(s)</dd></dl>");
        html.Append("<p>Reproduce (from the repository root, .NET 10 SDK):</p><pre>")
            .Append(Svg.Text(string.Join('\n', ReproduceCommands(results, allScenarioIds))))
            .Append("</pre>");
    }
}
