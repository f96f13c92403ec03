using FanOut.Lab.Probing;
using FanOut.Lab.Results;

namespace FanOut.Cli.Tests.Commands;

public sealed class ReportCommandTests
{
    [Fact]
    public async Task Report_ResultsFolder_WritesReportHtmlBesideIt()
    {
        var folder = Directory.CreateTempSubdirectory("fanout-report-cli-");
        try
        {
            var results = new LabResults
            {
                Machine = new MachineInfo("Linux", 2, ".NET 10", "CPU"),
                StartedAt = DateTimeOffset.UnixEpoch,
                Scenarios =
                [
                    new ScenarioResult
                    {
                        Id = "seed000-fanout500", Seed = "000.txt", SeedClaim = "claim", SeedMachine = "m", Scale = 1, Full = false,
                        Cases = [new CaseResult { Strategy = "Task.WhenAll", Workload = "w", Parameters = new Dictionary<string, object> { ["itemCount"] = 500 }, Runs = 3, MeanMs = 21, Efficiency = 0.95 }],
                    },
                ],
            };
            await File.WriteAllTextAsync(Path.Combine(folder.FullName, "results.json"), ResultsJson.Serialize(results));
            var cli = new CliHarness();

            var exit = await cli.RunAsync("report", folder.FullName);

            Assert.Equal(0, exit);
            var html = await File.ReadAllTextAsync(Path.Combine(folder.FullName, "report.html"));
            Assert.Contains("<section id=\"seed000-fanout500\">", html, StringComparison.Ordinal);
            Assert.Contains("1 scenario(s), 1 case(s)", cli.Output, StringComparison.Ordinal);
        }
        finally
        {
            folder.Delete(recursive: true);
        }
    }

    [Fact]
    public async Task Report_MissingPath_IsAUsageErrorNamingIt()
    {
        var cli = new CliHarness();
        var exit = await cli.RunAsync("report", "/no/such/fanout-results");
        cli.AssertUsageError(exit, "/no/such/fanout-results", "results.json");
    }

    [Fact]
    public async Task Report_NotResultsJson_IsAUsageErrorNamingTheFile()
    {
        var file = Path.GetTempFileName();
        try
        {
            await File.WriteAllTextAsync(file, "{ not json");
            var cli = new CliHarness();
            var exit = await cli.RunAsync("report", file);
            cli.AssertUsageError(exit, file, "not a FanOut results.json");
        }
        finally
        {
            File.Delete(file);
        }
    }

    [Fact]
    public async Task Report_ProbeFolder_WritesReportHtmlWithTheProbeSection()
    {
        // The report is under test, not the probe: a live probe on a busy host may rightly end "unconfirmed" (ProbeCommandTests own that).
        var folder = Directory.CreateTempSubdirectory("fanout-report-probe-cli-");
        try
        {
            ProbeReportFile.Write(folder.FullName, SampleProbeReports.Capacity6(openLoop: true));
            var cli = new CliHarness();

            var exit = await cli.RunAsync("report", folder.FullName);

            Assert.Equal(0, exit);
            var html = await File.ReadAllTextAsync(Path.Combine(folder.FullName, "report.html"));
            Assert.Contains("<section id=\"probe\">", html, StringComparison.Ordinal);
            Assert.Contains("<b>Recommendation: 6 at once.</b>", html, StringComparison.Ordinal);
            Assert.Contains("data-open-loop-holds=\"true\"", html, StringComparison.Ordinal);
            Assert.Contains("the probe of", cli.Output, StringComparison.Ordinal);
        }
        finally
        {
            folder.Delete(recursive: true);
        }
    }

    [Fact]
    public async Task Report_BrokenProbeJson_IsAUsageErrorNamingTheFile()
    {
        var folder = Directory.CreateTempSubdirectory("fanout-report-probe-cli-");
        try
        {
            var file = Path.Combine(folder.FullName, "probe.json");
            await File.WriteAllTextAsync(file, "{ not json");
            var cli = new CliHarness();
            cli.AssertUsageError(await cli.RunAsync("report", folder.FullName), file, "not a FanOut probe.json");
        }
        finally
        {
            folder.Delete(recursive: true);
        }
    }
}
