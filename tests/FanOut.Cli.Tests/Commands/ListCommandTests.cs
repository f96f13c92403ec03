using FanOut.Lab.Scenarios;

namespace FanOut.Cli.Tests.Commands;

public sealed class ListCommandTests
{
    [Fact]
    public async Task List_PrintsEveryScenarioWithItsSeedFile()
    {
        var cli = new CliHarness();
        Assert.Equal(0, await cli.RunAsync("list"));
        foreach (var (id, seed) in new[]
        {
            ("seed000-fanout500", "000_"), ("seed001-io", "001_"), ("seed001-cpu", "001_"),
            ("seed002-channels", "002_"), ("seed003-sync-async", "003_"), ("seed004-mixed", "004_"),
        })
        {
            var line = cli.Output.Split('\n').Single(l => l.StartsWith(id + " ", StringComparison.Ordinal));
            Assert.Contains(seed, line, StringComparison.Ordinal);
        }
    }

    [Fact]
    public async Task List_EveryDescriptionStartsInOneColumn()
    {
        var cli = new CliHarness();
        Assert.Equal(0, await cli.RunAsync("list"));
        var lines = cli.Output.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Equal(ScenarioCatalog.Default.Scenarios.Count, lines.Length);

        // The seed file and the description start at the same column on every line, whatever the longest id is.
        var seedColumns = lines.Select(l => l.IndexOf(" seed ", StringComparison.Ordinal)).Distinct().ToArray();
        var describeColumns = lines.Select(l => l.IndexOf(".txt", StringComparison.Ordinal) + ".txt".Length).Distinct().ToArray();
        Assert.Single(seedColumns);
        Assert.Single(describeColumns);
        Assert.All(lines, l => Assert.Equal(' ', l[describeColumns[0]]));
        Assert.All(lines, l => Assert.NotEqual(' ', l[describeColumns[0] + 2]));
    }
}
