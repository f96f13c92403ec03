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
}
