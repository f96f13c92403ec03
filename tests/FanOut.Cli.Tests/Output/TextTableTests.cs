using FanOut.Cli.Output;

namespace FanOut.Cli.Tests.Output;

public sealed class TextTableTests
{
    private static readonly string[] s_headers = ["Strategy", "Running at return", "Await threw"];

    private static readonly IReadOnlyList<string>[] s_rows =
    [
        ["Parallel.ForEachAsync (default)", "12,345", "ItemFailedException (item 10) / TaskCanceledException"],
        ["Task.WhenAll", "0", "AggregateException"],
    ];

    [Fact]
    public void Render_NoWidth_EveryRowOnOneLine()
    {
        var lines = Lines(TextTable.Render(s_headers, s_rows, i => i == 1));

        Assert.Equal(4, lines.Length);
        Assert.Contains("ItemFailedException (item 10) / TaskCanceledException", lines[2], StringComparison.Ordinal);
    }

    [Fact]
    public void Render_SlightlyTooWide_WrapsOnlyHeaders()
    {
        var natural = Lines(TextTable.Render(s_headers, s_rows, i => i == 1))[0].Length;

        var lines = Lines(TextTable.Render(s_headers, s_rows, i => i == 1, natural - 8));

        Assert.All(lines, l => Assert.True(l.Length <= natural - 8, l));
        Assert.Contains(lines, l => l.Contains("| return", StringComparison.Ordinal) || l.Contains(" return ", StringComparison.Ordinal));
        Assert.Equal(3, lines.Count(l => l.Contains("Task.WhenAll", StringComparison.Ordinal) || l.Contains("Parallel.ForEachAsync", StringComparison.Ordinal) || l.StartsWith("|---", StringComparison.Ordinal)));
    }

    [Fact]
    public void Render_MuchTooWide_WrapsTextCellsButNeverANumber()
    {
        var lines = Lines(TextTable.Render(s_headers, s_rows, i => i == 1, 60));

        Assert.All(lines, l => Assert.True(l.Length <= 60, $"{l.Length}: {l}"));
        Assert.Contains(lines, l => l.Contains("12,345", StringComparison.Ordinal));
        var words = string.Join(' ', lines.SelectMany(l => l.Split('|', ' ', StringSplitOptions.RemoveEmptyEntries)));
        foreach (var word in "ItemFailedException (item 10) / TaskCanceledException".Split(' '))
        {
            Assert.Contains(word, words, StringComparison.Ordinal);
        }
    }

    [Theory]
    [InlineData("a bb ccc dddd", 6, new[] { "a bb", "ccc", "dddd" })]
    [InlineData("abcdefgh", 3, new[] { "abc", "def", "gh" })]
    [InlineData("", 5, new[] { "" })]
    public void Wrap_BreaksAtSpacesAndSplitsOnlyOverlongWords(string text, int width, string[] expected) =>
        Assert.Equal(expected, TextTable.Wrap(text, width));

    private static string[] Lines(string table) => table.ReplaceLineEndings("\n").TrimEnd('\n').Split('\n');
}
