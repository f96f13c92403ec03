using FanOut.Lab.Scenarios;

namespace FanOut.Cli.Tests.Commands;

public sealed class ListCommandTests
{
    [Fact]
    public async Task List_NamesEveryScenarioByWhatItDoesNotBySeedFile()
    {
        // Issue 26: the list showed seed file hashes (000_501b81ed9e953635.txt), which tell a person choosing nothing.
        var cli = new CliHarness();
        Assert.Equal(0, await cli.RunAsync("list"));
        var lines = cli.Output.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        foreach (var scenario in ScenarioCatalog.Default.Scenarios)
        {
            var line = lines.Single(l => l.StartsWith(scenario.Id + " ", StringComparison.Ordinal));
            Assert.False(string.IsNullOrWhiteSpace(scenario.Purpose), $"{scenario.Id} says nothing about what it does");
            Assert.EndsWith("  " + scenario.Purpose, line.TrimEnd(), StringComparison.Ordinal);
        }

        Assert.DoesNotContain(".txt", cli.Output, StringComparison.Ordinal);
        Assert.Contains("Waits: how fast 500 of them finish with each API", cli.Output, StringComparison.Ordinal);
        Assert.Contains("500 items x Task.Delay(20ms); 7 cases", cli.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task List_PurposeAndWhatItRunsStartInOneColumn()
    {
        var cli = new CliHarness();
        Assert.Equal(0, await cli.RunAsync("list"));
        var lines = cli.Output.Split('\n', StringSplitOptions.RemoveEmptyEntries).Select(l => l.TrimEnd()).ToArray();
        Assert.Equal(2 * ScenarioCatalog.Default.Scenarios.Count, lines.Length);

        // Every purpose (first line) and every description (second line) starts at one column, whatever the longest id is.
        var column = ScenarioCatalog.Default.Scenarios.Max(s => s.Id.Length) + 2;
        Assert.All(lines, l => Assert.Equal(' ', l[column - 1]));
        Assert.All(lines, l => Assert.NotEqual(' ', l[column]));
        Assert.All(lines.Where((_, i) => i % 2 == 1), l => Assert.True(string.IsNullOrWhiteSpace(l[..column]), l));
    }
}
