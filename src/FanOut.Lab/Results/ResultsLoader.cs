using System.Text.Json;

namespace FanOut.Lab.Results;

/// <summary>Reads a results.json back (a results folder or the file itself), for <c>fanout report</c>.</summary>
public static class ResultsLoader
{
    /// <summary>The results at <paramref name="path"/>, or null with a one-line <paramref name="error"/> naming the path and what to give instead.</summary>
    /// <param name="path">A results folder (holding results.json) or a results.json file.</param>
    /// <param name="resultsFile">The file read, when found.</param>
    /// <param name="error">Why nothing was read.</param>
    public static LabResults? Load(string path, out string resultsFile, out string? error)
    {
        ArgumentNullException.ThrowIfNull(path);
        resultsFile = Directory.Exists(path) ? Path.Combine(path, ResultsDirectory.ResultsJsonFile) : path;
        if (!File.Exists(resultsFile))
        {
            error = Directory.Exists(path)
                ? $"'{path}' holds no {ResultsDirectory.ResultsJsonFile}: give a folder written by 'fanout run' or a results.json file."
                : $"'{path}' does not exist: give a folder written by 'fanout run' or a results.json file.";
            return null;
        }

        try
        {
            var results = ResultsJson.Deserialize<LabResults>(File.ReadAllText(resultsFile));
            error = results.Scenarios is null || results.Machine is null ? $"'{resultsFile}' is not a FanOut results.json (no machine or scenarios)." : null;
            return error is null ? results : null;
        }
        catch (JsonException ex)
        {
            error = $"'{resultsFile}' is not a FanOut results.json ({ex.Message.Split('\n')[0].TrimEnd('.')}).";
            return null;
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            error = $"'{resultsFile}' could not be read ({ex.Message.TrimEnd('.')}).";
            return null;
        }
    }
}
