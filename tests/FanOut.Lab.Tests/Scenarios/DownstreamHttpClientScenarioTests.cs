using System.Globalization;

using FanOut.Lab.Results;
using FanOut.Lab.Running;
using FanOut.Lab.Scenarios;

namespace FanOut.Lab.Tests.Scenarios;

/// <summary>downstream-http-client at a small scale: the handler's claims (every call succeeds, the server never sees more
/// than it serves) hold, and every sentence of the verdict agrees with the table.</summary>
public sealed class DownstreamHttpClientScenarioTests
{
    [Fact]
    public async Task DownstreamHttpClient_QuarterScale_EveryCallSucceedsWithinCapacityAndTheVerdictAgreesWithTheTable()
    {
        var scenario = ScenarioCatalog.Default.Select("downstream-http-client", out var error) ?? throw new InvalidOperationException(error);
        using var limit = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        var runner = new LabRunner(new InProcessScenarioCaseRunner(new RunPolicy(0, 1, 1, TimeSpan.Zero)), null, new SilentProgress());
        var result = Assert.Single((await runner.RunAsync(scenario, new ScenarioSize(0.25), limit.Token)).Scenarios);
        Assert.All(result.Cases, c => Assert.True(c.Succeeded, c.Error));

        var adaptive = result.Cases.Single(c => c.Strategy == DownstreamHttpClientScenario.AdaptiveRow);
        var hand = result.Cases.Single(c => c.Strategy == DownstreamHttpClientScenario.FixedRow);
        var whenAll = result.Cases.Single(c => c.Strategy == "Task.WhenAll");
        var items = (int)adaptive.ItemsStarted;
        foreach (var row in new[] { adaptive, hand })
        {
            Assert.Equal(0, row.Io!.Failures);
            Assert.Equal(items, row.Io.Successes);
            Assert.InRange(row.Io.PeakConcurrentServed!.Value, 1, 16);
        }

        // Only the adaptive row reports a limit (it is FanOut's default); the hand-picked one is not described as the default.
        Assert.NotNull(adaptive.LimitFinal);
        Assert.Null(hand.LimitFinal);

        // The host's limit is named after the host (FanOut.Http), so the adaptive row's timeline has its decisions.
        Assert.NotEmpty(adaptive.Timeline!.Decisions!);
        Assert.Null(hand.Timeline?.Decisions);

        var ratio = DownstreamHttpClientScenario.ShownRatio(adaptive.Io!.SuccessesPerSecond / hand.Io!.SuccessesPerSecond);
        Assert.Contains($"every one of {items:N0} calls succeeded", result.Verdict, StringComparison.Ordinal);
        Assert.Contains(string.Create(CultureInfo.CurrentCulture, $"{ratio:0.00}x the hand-picked Fixed(16)"), result.Verdict, StringComparison.Ordinal);
        Assert.Contains(ratio >= DownstreamHttpClientScenario.ThroughputGoal ? "at least the 0.9x goal" : "BELOW the 0.9x goal", result.Verdict, StringComparison.Ordinal);
        Assert.Contains($"ended at {adaptive.LimitFinal:N0}", result.Verdict, StringComparison.Ordinal);
        Assert.Contains($"no limit got {DownstreamCasesOutcome(whenAll)}", result.Verdict, StringComparison.Ordinal);
        Assert.DoesNotContain($"FanOut's default: {DownstreamHttpClientScenario.FixedRow}", result.Verdict, StringComparison.Ordinal);
    }

    private static string DownstreamCasesOutcome(CaseResult c) => $"{c.Io!.Successes:N0} ok";
}
