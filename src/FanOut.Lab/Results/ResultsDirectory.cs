namespace FanOut.Lab.Results;

/// <summary>The <c>--out</c> folder: rewrites results.json, results.csv, report.md and report.html after every finished case.</summary>
/// <remarks>Each file is written to a temporary name and renamed over the old one, so a crash or Ctrl+C mid-write
/// leaves the previous complete file, never a torn one: the cases already finished are never lost.</remarks>
public sealed class ResultsDirectory
{
    private ResultsDirectory(string path) => Path = path;

    /// <summary>The folder.</summary>
    public string Path { get; }

    /// <summary>The default folder: <c>fanout-results/&lt;UTC timestamp&gt;</c> under the current directory.</summary>
    public static string DefaultPath(DateTimeOffset now) =>
        System.IO.Path.Combine("fanout-results", now.UtcDateTime.ToString("yyyyMMdd-HHmmss", System.Globalization.CultureInfo.InvariantCulture));

    /// <summary>Creates (or reuses) the folder and proves it writable; returns null with <paramref name="error"/> when it is not.</summary>
    public static ResultsDirectory? Open(string path, out string? error)
    {
        ArgumentNullException.ThrowIfNull(path);
        error = null;
        try
        {
            var full = System.IO.Path.GetFullPath(path);
            Directory.CreateDirectory(full);
            var probe = System.IO.Path.Combine(full, $".write-test-{Guid.NewGuid():N}");
            File.WriteAllText(probe, string.Empty);
            File.Delete(probe);
            return new ResultsDirectory(full);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or ArgumentException or NotSupportedException)
        {
            error = $"--out '{path}' is not a writable folder ({ex.Message.TrimEnd('.')}): give a folder you can create files in.";
            return null;
        }
    }

    /// <summary>The HTML report's file name.</summary>
    public const string ReportHtml = "report.html";

    /// <summary>The results file's name.</summary>
    public const string ResultsJsonFile = "results.json";

    /// <summary>Writes every file for <paramref name="results"/>; report.html only when <paramref name="html"/>.</summary>
    /// <remarks>The runner renders report.html when a scenario ends (and when a run is interrupted), not after every case:
    /// the page holds every chart of the run so far, and redrawing it a hundred times cost seconds of a five-minute run.</remarks>
    public void Write(LabResults results, bool html = true)
    {
        ArgumentNullException.ThrowIfNull(results);
        WriteAtomically(System.IO.Path.Combine(Path, ResultsJsonFile), ResultsJson.Serialize(results));
        WriteAtomically(System.IO.Path.Combine(Path, "results.csv"), ResultsCsv.Write(results));
        WriteAtomically(System.IO.Path.Combine(Path, "report.md"), MarkdownReport.Write(results));
        if (!html)
        {
            return;
        }

        WriteAtomically(System.IO.Path.Combine(Path, ReportHtml), Reports.Html.HtmlReport.Write(results, Scenarios.ScenarioCatalog.Default.Scenarios.Select(s => s.Id).ToArray()));
    }

    /// <summary>Writes <paramref name="content"/> to a temporary name and renames it over <paramref name="target"/>.</summary>
    public static void WriteAtomically(string target, string content)
    {
        ArgumentNullException.ThrowIfNull(target);
        var temp = target + ".tmp";
        File.WriteAllText(temp, content);
        File.Move(temp, target, overwrite: true);
    }
}
