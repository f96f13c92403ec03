using FanOut.Lab.Results;
using FanOut.Lab.Running;
using FanOut.Lab.Scenarios;
using FanOut.Lab.Tests.Scenarios;

namespace FanOut.Lab.Tests.Results;

public sealed class ResultsFilesTests : IDisposable
{
    private readonly string _dir = Path.Combine(Path.GetTempPath(), $"fanout-test-{Guid.NewGuid():N}");

    public void Dispose()
    {
        if (Directory.Exists(_dir))
        {
            Directory.Delete(_dir, recursive: true);
        }
    }

    [Fact]
    public void Open_PathUnderAFile_ReturnsOneLineErrorNamingThePath()
    {
        Directory.CreateDirectory(_dir);
        var file = Path.Combine(_dir, "file");
        File.WriteAllText(file, "x");
        Assert.Null(ResultsDirectory.Open(Path.Combine(file, "sub"), out var error));
        Assert.Contains(Path.Combine(file, "sub"), error);
        Assert.DoesNotContain("\n", error, StringComparison.Ordinal);
    }

    [Fact]
    public async Task RunAsync_MiddleCaseFails_EarlierAndLaterCasesAreSavedWithTheFailure()
    {
        var output = ResultsDirectory.Open(_dir, out _)!;
        var runner = new LabRunner(new FailingSecondCaseRunner(), output, new SilentProgress());
        await runner.RunAsync([new ThreeCaseScenario()], new(), CancellationToken.None);

        var json = await File.ReadAllTextAsync(Path.Combine(_dir, "results.json"));
        var results = ResultsJson.Deserialize<LabResults>(json);
        var cases = results.Scenarios[0].Cases;
        Assert.Equal(3, cases.Count);
        Assert.Null(cases[0].Error);
        Assert.Equal("crashed", cases[1].Error);
        Assert.Null(cases[2].Error);
        Assert.Contains("FAILED: crashed", await File.ReadAllTextAsync(Path.Combine(_dir, "report.md")));
        Assert.Equal(4, (await File.ReadAllLinesAsync(Path.Combine(_dir, "results.csv"))).Length);
        Assert.Empty(Directory.GetFiles(_dir, "*.tmp"));
    }

    [Fact]
    public void Field_CommaQuoteAndNewline_AreQuotedPerRfc4180()
    {
        Assert.Equal("\"a,b\"", ResultsCsv.Field("a,b"));
        Assert.Equal("\"say \"\"hi\"\"\"", ResultsCsv.Field("say \"hi\""));
        Assert.Equal("plain", ResultsCsv.Field("plain"));
        Assert.Equal("0.5", ResultsCsv.Field(0.5));
        Assert.Equal(string.Empty, ResultsCsv.Field(null));
    }

    [Fact]
    public void Write_Report_PlacesSeedFigureBesideOursAndTheVerdict()
    {
        var scenario = new ScenarioResult
        {
            Id = "tiny",
            Seed = "tiny.txt",
            SeedClaim = "claims nothing",
            SeedMachine = "none",
            Scale = 1,
            Full = false,
            Verdict = "2 cases",
            Cases = [new CaseResult { Strategy = "Task.WhenAll", Workload = "w", Parameters = new Dictionary<string, object> { ["itemCount"] = 4 }, Runs = 3, MeanMs = 12.5, SeedSays = "~24 ms" }],
        };
        var report = MarkdownReport.Write(new LabResults { Machine = MachineInfo.Current(), StartedAt = DateTimeOffset.UnixEpoch, Scenarios = [scenario] });
        Assert.Contains("| Task.WhenAll | N=4 |", report);
        Assert.Contains("12.50 ms", report);
        Assert.Contains("~24 ms", report);
        Assert.Contains("**Here:** 2 cases", report);
        Assert.Contains("claims nothing", report);
    }

    private sealed class ThreeCaseScenario : Scenario
    {
        private readonly TinyScenario _tiny = new();

        public override string Id => "three";

        public override SeedReference Seed => _tiny.Seed;

        public override string Describe(ScenarioSize size) => "three";

        public override IReadOnlyList<LabCase> Cases(ScenarioSize size) => [.. _tiny.Cases(size), _tiny.Cases(size)[0]];

        public override string Verdict(ScenarioResult measured) => "done";
    }

    private sealed class FailingSecondCaseRunner : ICaseRunner
    {
        public Task<CaseResult> RunAsync(Scenario scenario, ScenarioSize size, int caseIndex, CancellationToken cancellationToken)
        {
            var parameters = new Dictionary<string, object> { ["itemCount"] = 4 };
            return Task.FromResult(caseIndex == 1
                ? CaseResult.Failed("S", "W", parameters, "crashed")
                : new CaseResult { Strategy = "S", Workload = "W", Parameters = parameters, Runs = 1, MeanMs = 1 });
        }
    }
}
