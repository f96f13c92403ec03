namespace FanOut.Cli.Tests.Commands;

/// <summary><c>fanout --help</c>: the usage names the command a user types, not the assembly.</summary>
public sealed class HelpTests
{
    [Fact]
    public async Task Help_UsageNamesTheFanoutCommand()
    {
        var cli = new CliHarness();
        Assert.Equal(0, await cli.RunAsync("--help"));
        Assert.Contains("Usage:\n  fanout [command] [options]", cli.Output.ReplaceLineEndings("\n"), StringComparison.Ordinal);
        Assert.DoesNotContain("FanOut.Cli", cli.Output, StringComparison.Ordinal);
        foreach (var command in new[] { "list", "run <scenario>", "serve", "report <results>", "probe <url>" })
        {
            Assert.Contains(command, cli.Output, StringComparison.Ordinal);
        }
    }

    [Fact]
    public async Task RunHelp_UsageNamesFanoutRun()
    {
        var cli = new CliHarness();
        Assert.Equal(0, await cli.RunAsync("run", "--help"));
        Assert.Contains("fanout run <scenario> [options]", cli.Output, StringComparison.Ordinal);
    }
}
