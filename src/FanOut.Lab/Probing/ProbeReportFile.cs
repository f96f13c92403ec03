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

    /// <summary>Reads probe.json at <paramref name="path"/> (the file, or a folder holding it); null when there is none,
    /// with <paramref name="error"/> set when a file was there but is not a probe report.</summary>
    public static ProbeReport? Read(string path, out string? error)
    {
        ArgumentNullException.ThrowIfNull(path);
        error = null;
        var file = Directory.Exists(path) ? Path.Combine(path, FileName) : path;
        if (!File.Exists(file))
        {
            return null;
        }

        try
        {
            var report = ResultsJson.Deserialize<ProbeReport>(File.ReadAllText(file));
            if (report.Levels is null || report.Recommendation is null || report.Url is null)
            {
                error = $"'{file}' is not a FanOut probe.json (no url, levels or recommendation).";
                return null;
            }

            return report;
        }
        catch (System.Text.Json.JsonException ex)
        {
            error = $"'{file}' is not a FanOut probe.json ({ex.Message.Split('\n')[0].TrimEnd('.')}).";
            return null;
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            error = $"'{file}' could not be read ({ex.Message.TrimEnd('.')}).";
            return null;
        }
    }
}
