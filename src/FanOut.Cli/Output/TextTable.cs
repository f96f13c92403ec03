using System.Text;

namespace FanOut.Cli.Output;

/// <summary>A plain, padded pipe table like BenchmarkDotNet's console summary: readable in a log, a pipe or a file.</summary>
public static class TextTable
{
    /// <summary>Renders <paramref name="headers"/> and <paramref name="rows"/>; <paramref name="rightAligned"/> picks the numeric columns.</summary>
    public static string Render(IReadOnlyList<string> headers, IReadOnlyList<IReadOnlyList<string>> rows, Func<int, bool> rightAligned)
    {
        ArgumentNullException.ThrowIfNull(headers);
        ArgumentNullException.ThrowIfNull(rows);
        ArgumentNullException.ThrowIfNull(rightAligned);
        var widths = headers.Select((h, i) => Math.Max(h.Length, rows.Count == 0 ? 0 : rows.Max(r => i < r.Count ? r[i].Length : 0))).ToArray();
        var text = new StringBuilder();
        AppendRow(text, headers, widths, _ => false);
        text.AppendLine("|" + string.Join("|", widths.Select((w, i) => rightAligned(i) ? new string('-', w + 1) + ":" : new string('-', w + 2))) + "|");
        foreach (var row in rows)
        {
            AppendRow(text, row, widths, rightAligned);
        }

        return text.ToString();
    }

    private static void AppendRow(StringBuilder text, IReadOnlyList<string> cells, int[] widths, Func<int, bool> rightAligned)
    {
        text.Append('|');
        for (var i = 0; i < widths.Length; i++)
        {
            var cell = i < cells.Count ? cells[i] : string.Empty;
            text.Append(' ').Append(rightAligned(i) ? cell.PadLeft(widths[i]) : cell.PadRight(widths[i])).Append(" |");
        }

        text.AppendLine();
    }
}
