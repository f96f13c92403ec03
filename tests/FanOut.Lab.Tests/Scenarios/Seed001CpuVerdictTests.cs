using FanOut.Lab.Results;
using FanOut.Lab.Scenarios;
using FanOut.Lab.Tests.Results;

namespace FanOut.Lab.Tests.Scenarios;

/// <summary>The verdict's opening says what its table shows (issue 18: every printed sentence agrees with its table).</summary>
public sealed class Seed001CpuVerdictTests
{
    [Fact]
    public void Verdict_ForEachAsyncFaster_Agrees()
    {
        var verdict = new Seed001CpuScenario().Verdict(Result(whenAllMs: 100, forEachMs: 60));

        Assert.StartsWith("Agrees that ForEachAsync wins on heavy CPU work", verdict, StringComparison.Ordinal);
        Assert.Contains("a 1.67x speed-up", verdict, StringComparison.Ordinal);
    }

    [Fact]
    public void Verdict_ForEachAsyncSlowerOnABusyMachine_DoesNotSayItWon()
    {
        // A loaded run measured WhenAll 125 ms, ForEachAsync 143 ms, and the old verdict still opened "Agrees that ForEachAsync wins".
        var verdict = new Seed001CpuScenario().Verdict(Result(whenAllMs: 125, forEachMs: 143));

        Assert.StartsWith("Disagrees here: ForEachAsync did not win", verdict, StringComparison.Ordinal);
        Assert.DoesNotContain("Agrees", verdict, StringComparison.Ordinal);
        Assert.Contains("a 0.87x speed-up", verdict, StringComparison.Ordinal);
    }

    private static ScenarioResult Result(double whenAllMs, double forEachMs) =>
        ScenarioResults.Of("seed001-cpu", Row("Task.WhenAll", whenAllMs, 1), Row("Parallel.ForEachAsync (default)", forEachMs, 2));

    private static CaseResult Row(string strategy, double meanMs, double peakInFlight) => new()
    {
        Strategy = strategy,
        Workload = "w",
        Parameters = new Dictionary<string, object> { ["itemCount"] = 100, ["calculationCount"] = 100_000 },
        Runs = 3,
        MeanMs = meanMs,
        PeakInFlight = peakInFlight,
        Efficiency = 0.3,
    };
}
