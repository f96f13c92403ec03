using System.Globalization;
using System.Text;

using FanOut.Lab.Results.Columns;

namespace FanOut.Lab.Results;

/// <summary>results.csv: one line per case, the scenario id then every <see cref="ResultColumns.CsvFields"/> field, raw numbers (ms, bytes) for spreadsheets.</summary>
public static class ResultsCsv
{
    /// <summary>The whole file for <paramref name="results"/>.</summary>
    public static string Write(LabResults results)
    {
        ArgumentNullException.ThrowIfNull(results);
        var fields = ResultColumns.CsvFields;
        var text = new StringBuilder();
        text.AppendLine(string.Join(',', fields.Select(f => f.Name).Prepend("scenario")));
        foreach (var scenario in results.Scenarios)
        {
            foreach (var c in scenario.Cases)
            {
                text.AppendLine(string.Join(',', fields.Select(f => Field(f.Value(c))).Prepend(Field(scenario.Id))));
            }
        }

        return text.ToString();
    }

    /// <summary>One field, quoted when it holds a comma, a quote or a line break (RFC 4180).</summary>
    public static string Field(object? value)
    {
        var text = value switch
        {
            null => string.Empty,
            double d => d.ToString("R", CultureInfo.InvariantCulture),
            IFormattable f => f.ToString(null, CultureInfo.InvariantCulture),
            _ => value.ToString() ?? string.Empty,
        };
        return text.AsSpan().IndexOfAny(",\"\r\n") >= 0 ? $"\"{text.Replace("\"", "\"\"", StringComparison.Ordinal)}\"" : text;
    }
}
