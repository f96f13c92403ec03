using FanOut.Lab.Results;

namespace FanOut.Lab.Probing;

/// <summary>Writes probe.json: to a temporary name, then renamed over the old one, so no reader sees half a file.</summary>
public static class ProbeReportFile
{
    /// <summary>The file's name in the <c>--out</c> folder.</summary>
    public const string FileName = "probe.json";

    /// <summary>The JSON of <paramref name="report"/> (camelCase, indented, as results.json).</summary>
    public static string ToJson(ProbeReport report) => ResultsJson.Serialize(report);

    /// <summary>Writes <paramref name="report"/> to <paramref name="directory"/>/probe.json, creating the folder; returns the file's path.</summary>
    public static string Write(string directory, ProbeReport report)
    {
        ArgumentNullException.ThrowIfNull(directory);
        ArgumentNullException.ThrowIfNull(report);
        var full = Path.GetFullPath(directory);
        Directory.CreateDirectory(full);
        var target = Path.Combine(full, FileName);
        var temp = target + ".tmp";
        File.WriteAllText(temp, ToJson(report));
        File.Move(temp, target, overwrite: true);
        return target;
    }
}
