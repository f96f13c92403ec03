namespace FanOut.Cli.Tests.Commands;

/// <summary>Bad input: one line naming the bad value and the valid choices, exit code 2, nothing run.</summary>
public sealed class UsageErrorTests
{
    [Theory]
    [InlineData("run nope", "'nope'", "seed000-fanout500")]
    [InlineData("run all --scale 0", "--scale 0", "(0, 1]")]
    [InlineData("run all --scale 1.5", "--scale 1.5", "(0, 1]")]
    [InlineData("run all --scale -1", "--scale -1", "(0, 1]")]
    [InlineData("run all --timeout 0", "--timeout 0", "positive")]
    [InlineData("run all --bogus", "--bogus", "fanout --help")]
    [InlineData("run all --scale abc", "--scale 'abc'", "at most 1")]
    [InlineData("frobnicate", "frobnicate", "fanout --help")]
    public async Task Invoke_BadInput_OneLineErrorAndExitCode2(string commandLine, string namesValue, string namesChoices)
    {
        var cli = new CliHarness();
        cli.AssertUsageError(await cli.RunAsync(commandLine.Split(' ')), namesValue, namesChoices);
        Assert.DoesNotContain("==", cli.Output, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("seed000-fanout50", "seed000-fanout500")]
    [InlineData("seed001-cpuu", "seed001-cpu")]
    [InlineData("DOWNSTREAM-CAPACTY", "downstream-capacity")]
    [InlineData("hash", "hash-files")]
    public async Task Run_NearMissScenario_SaysDidYouMeanAndListsTheChoices(string typed, string meant)
    {
        // Issue 26: "run seed000-fanout50" listed every scenario with no "did you mean".
        var cli = new CliHarness();
        cli.AssertUsageError(await cli.RunAsync("run", typed), $"unknown scenario '{typed}': did you mean {meant}? choose one of all, ", "seed000-fanout500");
    }

    [Fact]
    public async Task Run_FarFromEveryScenario_NoGuess()
    {
        var cli = new CliHarness();
        cli.AssertUsageError(await cli.RunAsync("run", "nope"), "unknown scenario 'nope': choose one of all, ", "hash-files");
        Assert.DoesNotContain("did you mean", cli.Error.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Invoke_UnwritableOut_NamesTheFolderAndExits2()
    {
        var file = Path.GetTempFileName();
        try
        {
            var cli = new CliHarness();
            var exit = await cli.RunAsync("run", "seed003-sync-async", "--out", Path.Combine(file, "results"));
            Assert.Equal(2, exit);
            Assert.Contains("--out", cli.Error.ToString(), StringComparison.Ordinal);
            Assert.Contains("writable", cli.Error.ToString(), StringComparison.Ordinal);
        }
        finally
        {
            File.Delete(file);
        }
    }
}
