using System.Text.Json;

using FanOut.Lab.Results;
using FanOut.Lab.Running;
using FanOut.Lab.Tests.Scenarios;

namespace FanOut.Lab.Tests.Results;

/// <summary>results.json is the contract later tools read: these names must not drift.</summary>
public sealed class ResultsJsonContractTests
{
    private static readonly string[] s_caseFields =
    [
        "strategy", "workload", "parameters", "runs", "meanMs", "errorMs", "stdDevMs", "medianMs", "minMs", "maxMs", "idealMs", "efficiency",
        "peakInFlight", "threadPoolThreadsStart", "threadPoolThreadsPeak", "threadPoolThreadsEnd", "processThreadsStart", "processThreadsPeak",
        "processThreadsEnd", "peakQueueLength", "completedWorkItems", "lockContentions", "allocatedBytes", "gen0", "gen1", "gen2", "cpuTimeMs",
    ];

    [Fact]
    public async Task Serialize_RealRun_HasMachineScenariosAndEveryCaseField()
    {
        var scenario = new TinyScenario();
        var results = await new LabRunner(new InProcessScenarioCaseRunner(new RunPolicy(0, 2, 2, TimeSpan.Zero)), null, new SilentProgress())
            .RunAsync([scenario], new(0.5), CancellationToken.None);

        using var json = JsonDocument.Parse(ResultsJson.Serialize(results));
        var machine = json.RootElement.GetProperty("machine");
        Assert.Equal(Environment.ProcessorCount, machine.GetProperty("processorCount").GetInt32());
        foreach (var field in new[] { "os", "dotnetVersion", "processor" })
        {
            Assert.False(string.IsNullOrEmpty(machine.GetProperty(field).GetString()), field);
        }

        var s = json.RootElement.GetProperty("scenarios")[0];
        Assert.Equal("tiny", s.GetProperty("id").GetString());
        Assert.Equal("tiny.txt", s.GetProperty("seed").GetString());
        Assert.Equal(0.5, s.GetProperty("scale").GetDouble());
        var cases = s.GetProperty("cases");
        Assert.Equal(2, cases.GetArrayLength());
        foreach (var c in cases.EnumerateArray())
        {
            foreach (var field in s_caseFields)
            {
                Assert.True(c.TryGetProperty(field, out _), $"case is missing '{field}'");
            }

            Assert.Equal(4, c.GetProperty("parameters").GetProperty("itemCount").GetInt32());
            Assert.Equal(2, c.GetProperty("runs").GetInt32());
        }

        Assert.Equal(4, cases[0].GetProperty("peakInFlight").GetDouble());
        Assert.Equal(1, cases[1].GetProperty("peakInFlight").GetDouble());
    }

    [Fact]
    public void Serialize_TimelineWithDecisions_RoundTripsUnderTheirNames()
    {
        var results = Reports.HtmlReportTests.FixtureWithDecisions();
        var timeline = results.Scenarios[0].Cases.Single(c => c.Timeline is not null).Timeline!;

        var json = ResultsJson.Serialize(results);
        var copy = ResultsJson.Deserialize<LabResults>(json).Scenarios[0].Cases.Single(c => c.Timeline is not null).Timeline!;

        Assert.Equal(timeline.Decisions!, copy.Decisions!);
        Assert.Equal(0, copy.DecisionsDropped);
        using var document = JsonDocument.Parse(json);
        var decision = document.RootElement.GetProperty("scenarios")[0].GetProperty("cases").EnumerateArray()
            .Single(c => c.GetProperty("timeline").ValueKind == JsonValueKind.Object).GetProperty("timeline").GetProperty("decisions")[1];
        Assert.Equal(
            ["timeMs", "from", "to", "reason", "windowMedianMs", "baselineMs", "inFlight", "steps"],
            decision.EnumerateObject().Select(p => p.Name));
        Assert.Equal("Overload", decision.GetProperty("reason").GetString());
    }

    [Fact]
    public void Load_ResultsWrittenBeforeDecisions_LoadsWithNoDecisions()
    {
        // The golden results.json has a timeline and no "decisions" key: the file of an older lab.
        var file = Path.Combine(AppContext.BaseDirectory, "Results", "Golden", "results.json");
        Assert.DoesNotContain("decisions", File.ReadAllText(file), StringComparison.OrdinalIgnoreCase);

        var results = ResultsLoader.Load(file, out _, out var error);

        Assert.Null(error);
        var timeline = results!.Scenarios.SelectMany(s => s.Cases).Single(c => c.Timeline is not null).Timeline!;
        Assert.NotNull(timeline.Limit);
        Assert.Null(timeline.Decisions);
        Assert.Null(timeline.DecisionsDropped);
    }

    [Fact]
    public void Deserialize_SerializedCase_RoundTrips()
    {
        var original = CaseResult.Failed("S", "W", new Dictionary<string, object> { ["itemCount"] = 3 }, "boom");
        var copy = ResultsJson.Deserialize<CaseResult>(ResultsJson.Serialize(original));
        Assert.Equal("boom", copy.Error);
        Assert.Equal("3", copy.Parameters["itemCount"].ToString());
    }
}
