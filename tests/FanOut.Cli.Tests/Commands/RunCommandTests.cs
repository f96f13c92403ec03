using System.Text.Json;

namespace FanOut.Cli.Tests.Commands;

public sealed class RunCommandTests : IDisposable
{
    private readonly string _out = Path.Combine(Path.GetTempPath(), $"fanout-cli-{Guid.NewGuid():N}");

    public void Dispose()
    {
        if (Directory.Exists(_out))
        {
            Directory.Delete(_out, recursive: true);
        }
    }

    [Fact]
    public async Task Run_ChildProcesses_PrintsTableAndWritesAllThreeFiles()
    {
        var cli = new CliHarness();
        var exit = await cli.RunAsync("run", "seed003-sync-async", "--scale", "0.01", "--out", _out);
        Assert.True(exit == 0, cli.Error.ToString() + cli.Output);

        Assert.Contains("== seed003-sync-async", cli.Output, StringComparison.Ordinal);
        Assert.Contains("| Strategy", cli.Output, StringComparison.Ordinal);
        Assert.Contains("scale 0.01", cli.Output, StringComparison.Ordinal);
        Assert.Contains("Here: ", cli.Output, StringComparison.Ordinal);
        foreach (var file in new[] { "results.json", "results.csv", "report.md" })
        {
            Assert.True(File.Exists(Path.Combine(_out, file)), file);
        }

        using var json = JsonDocument.Parse(await File.ReadAllTextAsync(Path.Combine(_out, "results.json")));
        var scenario = json.RootElement.GetProperty("scenarios")[0];
        Assert.Equal("seed003-sync-async", scenario.GetProperty("id").GetString());
        Assert.Equal(0.01, scenario.GetProperty("scale").GetDouble());
        var cases = scenario.GetProperty("cases");
        Assert.Equal(6, cases.GetArrayLength());   // the seed's 4 strategies + FanOut fixed and adaptive
        Assert.All(cases.EnumerateArray(), c => Assert.Equal(JsonValueKind.Null, c.GetProperty("error").ValueKind));

        // Five items: the blocking loop runs one at a time, WhenAll all five at once.
        Assert.Equal(1, cases[0].GetProperty("peakInFlight").GetDouble());
        Assert.Equal(5, cases[1].GetProperty("peakInFlight").GetDouble());
    }

    [Fact]
    public async Task Run_InProcess_WritesResultsAndSaysSo()
    {
        var cli = new CliHarness();
        var exit = await cli.RunAsync("run", "seed002-channels", "--scale", "0.05", "--in-process", "--out", _out);
        Assert.True(exit == 0, cli.Error.ToString() + cli.Output);
        Assert.Contains("in this process", cli.Output, StringComparison.Ordinal);
        var report = await File.ReadAllTextAsync(Path.Combine(_out, "report.md"));
        Assert.Contains("## seed002-channels", report, StringComparison.Ordinal);
        Assert.Contains("**Here:** Agrees", report, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Run_RealIoScenarioInChildProcesses_PrintsTheIoTableAndLeavesNoTempFiles()
    {
        static string[] Leftovers() => [.. Directory.GetDirectories(Path.GetTempPath(), "fanout-case-*"), .. Directory.GetDirectories(Path.GetTempPath(), "fanout-hash-files-*")];
        var before = Leftovers().ToHashSet();
        var cli = new CliHarness();
        var exit = await cli.RunAsync("run", "hash-files", "--scale", "0.02", "--out", _out);
        Assert.True(exit == 0, cli.Error.ToString() + cli.Output);
        Assert.Contains("| Strategy", cli.Output, StringComparison.Ordinal);
        Assert.Contains("OK/s", cli.Output, StringComparison.Ordinal);

        using var json = JsonDocument.Parse(await File.ReadAllTextAsync(Path.Combine(_out, "results.json")));
        var cases = json.RootElement.GetProperty("scenarios")[0].GetProperty("cases");
        Assert.All(cases.EnumerateArray(), c => Assert.Equal(200, c.GetProperty("io").GetProperty("successes").GetDouble()));

        // The child deleted its files, and the parent its per-case folder. Other test assemblies running in parallel make
        // folders of the same names in the same temp folder while their cases run: theirs go away, a leftover stays.
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(60);
        while (Leftovers().Any(d => !before.Contains(d)) && DateTime.UtcNow < deadline)
        {
            await Task.Delay(200);
        }

        Assert.DoesNotContain(Leftovers(), d => !before.Contains(d));
    }
}
