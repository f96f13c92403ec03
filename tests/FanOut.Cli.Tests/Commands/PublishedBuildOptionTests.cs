namespace FanOut.Cli.Tests.Commands;

/// <summary><c>--aot</c> and <c>--trimmed</c>: the argument plumbing, without publishing anything.</summary>
public sealed class PublishedBuildOptionTests
{
    [Theory]
    [InlineData("run seed001-io --aot", "--aot", "seed002-channels")]
    [InlineData("run seed003-sync-async --trimmed", "--trimmed", "seed002-channels")]
    [InlineData("run seed002-channels --aot --trimmed --in-process", "--aot and --trimmed", "--in-process")]
    public async Task Run_PublishedBuildWhereNoneApplies_OneLineErrorAndExitCode2(string commandLine, string namesOption, string namesChoice)
    {
        var cli = new CliHarness();
        cli.AssertUsageError(await cli.RunAsync(commandLine.Split(' ')), namesOption, namesChoice);
        Assert.DoesNotContain("==", cli.Output, StringComparison.Ordinal);
    }
}
