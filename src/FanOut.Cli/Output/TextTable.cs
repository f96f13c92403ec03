using System.Text;

namespace FanOut.Cli.Output;

/// <summary>A plain, padded pipe table like BenchmarkDotNet's console summary: readable in a log, a pipe or a file.</summary>
/// <remarks>
/// Given a width, the table fits it, the widest columns giving up room first: first only headers wrap at spaces (every column
/// keeps its widest cell), and only if that is not enough do text cells wrap onto continuation lines. A number never wraps.
/// </remarks>
public static class TextTable
{
    /// <summary>No column is made narrower than this for text (unless its longest word is shorter).</summary>
    private const int MinTextWidth = 10;

    /// <summary>Renders <paramref name="headers"/> and <paramref name="rows"/>; <paramref name="rightAligned"/> picks the numeric columns.</summary>
    /// <param name="headers">Column headers.</param>
    /// <param name="rows">Rows of cells.</param>
    /// <param name="rightAligned">True for numeric columns.</param>
    /// <param name="maxWidth">The widest a line may be; <see cref="int.MaxValue"/> (the default) keeps every cell on one line.</param>
    public static string Render(IReadOnlyList<string> headers, IReadOnlyList<IReadOnlyList<string>> rows, Func<int, bool> rightAligned, int maxWidth = int.MaxValue)
    {
        ArgumentNullException.ThrowIfNull(headers);
        ArgumentNullException.ThrowIfNull(rows);
        ArgumentNullException.ThrowIfNull(rightAligned);
        static string Cell(IReadOnlyList<string> row, int i) => i < row.Count ? row[i] : string.Empty;
        var widths = headers.Select((h, i) => Math.Max(h.Length, rows.Count == 0 ? 0 : rows.Max(r => Cell(r, i).Length))).ToArray();

        // First only headers wrap (every column keeps its widest cell), then text cells wrap (numbers never split).
        var cellWidths = headers.Select((h, i) => Math.Max(LongestWord(h), rows.Count == 0 ? 0 : rows.Max(r => Cell(r, i).Length))).ToArray();
        Fit(widths, cellWidths, maxWidth);
        var minimums = headers.Select((h, i) =>
        {
            var cells = rows.Select(r => Cell(r, i)).DefaultIfEmpty(string.Empty).ToArray();
            var cellMinimum = rightAligned(i) ? cells.Max(c => c.Length) : Math.Max(MinTextWidth, cells.Max(LongestWord));
            return Math.Min(widths[i], Math.Max(LongestWord(h), cellMinimum));
        }).ToArray();
        Fit(widths, minimums, maxWidth);

        var text = new StringBuilder();
        AppendRow(text, headers, widths, _ => false);
        text.AppendLine("|" + string.Join("|", widths.Select((w, i) => rightAligned(i) ? new string('-', w + 1) + ":" : new string('-', w + 2))) + "|");
        foreach (var row in rows)
        {
            AppendRow(text, row, widths, rightAligned);
        }

        return text.ToString();
    }

    /// <summary>The width of a rendered line: a pipe, then each column's width plus " | " less one space.</summary>
    public static int LineWidth(IReadOnlyList<int> widths)
    {
        ArgumentNullException.ThrowIfNull(widths);
        return 1 + widths.Sum(w => w + 3);
    }

    /// <summary>Word-wraps <paramref name="text"/> at spaces to lines of at most <paramref name="width"/> characters (a longer word is split).</summary>
    public static IReadOnlyList<string> Wrap(string text, int width)
    {
        ArgumentNullException.ThrowIfNull(text);
        ArgumentOutOfRangeException.ThrowIfLessThan(width, 1);
        var lines = new List<string>();
        var line = new StringBuilder();
        foreach (var word in text.Split(' '))
        {
            var rest = word;
            while (rest.Length > width)
            {
                if (line.Length > 0)
                {
                    lines.Add(line.ToString());
                    line.Clear();
                }

                lines.Add(rest[..width]);
                rest = rest[width..];
            }

            if (line.Length > 0 && line.Length + 1 + rest.Length > width)
            {
                lines.Add(line.ToString());
                line.Clear();
            }

            line.Append(line.Length > 0 ? " " : string.Empty).Append(rest);
        }

        lines.Add(line.ToString());
        return lines;
    }

    /// <summary>Narrows the widest shrinkable column, again and again, until the line fits or nothing can give.</summary>
    private static void Fit(int[] widths, int[] minimums, int maxWidth)
    {
        while (LineWidth(widths) > maxWidth)
        {
            var widest = Enumerable.Range(0, widths.Length).Where(i => widths[i] > minimums[i]).DefaultIfEmpty(-1).MaxBy(i => i < 0 ? -1 : widths[i]);
            if (widest < 0)
            {
                return;
            }

            widths[widest] -= Math.Min(LineWidth(widths) - maxWidth, widths[widest] - minimums[widest]);
        }
    }

    private static int LongestWord(string text) => text.Length == 0 ? 0 : text.Split(' ').Max(w => w.Length);

    private static void AppendRow(StringBuilder text, IReadOnlyList<string> cells, int[] widths, Func<int, bool> rightAligned)
    {
        var wrapped = widths.Select((w, i) => Wrap(i < cells.Count ? cells[i] : string.Empty, w)).ToArray();
        var height = wrapped.Length == 0 ? 1 : wrapped.Max(lines => lines.Count);
        for (var line = 0; line < height; line++)
        {
            text.Append('|');
            for (var i = 0; i < widths.Length; i++)
            {
                var lines = wrapped[i];
                var cell = line < lines.Count ? lines[line] : string.Empty;
                text.Append(' ').Append(rightAligned(i) ? cell.PadLeft(widths[i]) : cell.PadRight(widths[i])).Append(" |");
            }

            text.AppendLine();
        }
    }
}
