using FanOut.Lab.Results;
using FanOut.Lab.Running;
using FanOut.Lab.Scenarios;
using FanOut.Lab.Tests.Results;

namespace FanOut.Lab.Tests.Scenarios;

public sealed class RuntimeVariantsScenarioTests
{
    private static readonly RuntimeVariant[] s_builds = [RuntimeVariant.Jit, RuntimeVariant.NativeAot, RuntimeVariant.Trimmed];

    [Fact]
    public void Cases_ThreeBuilds_EveryCaseOncePerBuildTaggedWithItsBuild()
    {
        var inner = new Seed002ChannelsScenario();
        var scenario = new RuntimeVariantsScenario(inner, s_builds);

        var cases = scenario.Cases(ScenarioSize.Default);

        var count = inner.Cases(ScenarioSize.Default).Count;
        Assert.Equal(3 * count, cases.Count);
        Assert.Equal("Channel (all writers)", cases[0].Strategy.Name);
        Assert.Equal("Channel (all writers) [AOT]", cases[count].Strategy.Name);
        Assert.Equal("Channel (all writers) [trimmed]", cases[2 * count].Strategy.Name);
        Assert.Equal((RuntimeVariant.Trimmed, 1), scenario.Locate((2 * count) + 1, ScenarioSize.Default));
    }

    [Fact]
    public async Task RunAsync_PublishedCase_RunsTheInnerCaseInItsBuildsChildAndTagsTheRow()
    {
        var jit = new RecordingRunner();
        var aot = new RecordingRunner();
        var scenario = new RuntimeVariantsScenario(new Seed002ChannelsScenario(), [RuntimeVariant.Jit, RuntimeVariant.NativeAot]);
        var runner = new RuntimeVariantCaseRunner(jit, new Dictionary<RuntimeVariant, ICaseRunner> { [RuntimeVariant.NativeAot] = aot });
        var count = new Seed002ChannelsScenario().Cases(ScenarioSize.Default).Count;

        var result = await runner.RunAsync(scenario, ScenarioSize.Default, count + 3, CancellationToken.None);

        Assert.Empty(jit.Ran);
        Assert.Equal(("seed002-channels", 3), Assert.Single(aot.Ran));
        Assert.Equal("Parallel.ForEachAsync (DOP 40) [AOT]", result.Strategy);
    }

    [Fact]
    public void Verdict_PublishedRowsNoFaster_SaysTheNoteDoesNotHold()
    {
        var scenario = new RuntimeVariantsScenario(new Seed002ChannelsScenario(), [RuntimeVariant.Jit, RuntimeVariant.NativeAot]);
        static CaseResult Row(string strategy, double meanMs) => new() { Strategy = strategy, Workload = "w", Parameters = new Dictionary<string, object>(), Runs = 3, MeanMs = meanMs, ErrorMs = 1 };
        var measured = ScenarioResults.Of(
            "seed002-channels",
            Row("Channel (all writers)", 50), Row("Parallel.ForEachAsync (DOP 4)", 800), Row("Parallel.ForEachAsync (DOP 40)", 100),
            Row("Channel (all writers) [AOT]", 51), Row("Parallel.ForEachAsync (DOP 40) [AOT]", 99));

        var verdict = scenario.Verdict(measured);

        Assert.Contains("ForEachAsync at DOP 4 (16.0x)", verdict, StringComparison.Ordinal);
        Assert.Contains("AOT build: Channel (all writers) 51.0 ms (JIT 50.0 ms)", verdict, StringComparison.Ordinal);
        Assert.Contains("did not beat the Channel", verdict, StringComparison.Ordinal);
        Assert.Contains("not slower than under the JIT", verdict, StringComparison.Ordinal);
    }

    private sealed class RecordingRunner : ICaseRunner
    {
        public List<(string Scenario, int Case)> Ran { get; } = [];

        public Task<CaseResult> RunAsync(Scenario scenario, ScenarioSize size, int caseIndex, CancellationToken cancellationToken)
        {
            Ran.Add((scenario.Id, caseIndex));
            var labCase = scenario.Cases(size)[caseIndex];
            return Task.FromResult(new CaseResult { Strategy = labCase.Strategy.Name, Workload = "w", Parameters = new Dictionary<string, object>(), Runs = 1 });
        }
    }
}
