using FanOut.Redis.FleetWorker.Soak;

using Xunit.Abstractions;

namespace FanOut.Redis.Tests.Infrastructure;

/// <summary>The <c>redis-soak</c> engine (<see cref="FleetSoak"/>) run by a test: bounded, its progress and findings logged, and the checks every such test makes.</summary>
public static class SoakRuns
{
    /// <summary>Runs a soak of <paramref name="options"/> within <paramref name="guard"/> and logs its seed, progress, result and findings.</summary>
    public static async Task<FleetSoakResult> RunAsync(FleetSoakOptions options, ITestOutputHelper output, TimeSpan guard)
    {
        using var progress = new StringWriter();
        var result = await FleetSoak.RunAsync(options, progress).WaitAsync(guard);
        output.WriteLine($"seed {options.Seed}{Environment.NewLine}{progress}{result}{Environment.NewLine}{Findings(result)}");
        return result;
    }

    /// <summary>Every fault kind of <paramref name="options"/> was injected, and more than 100 items ran.</summary>
    public static void AssertEveryKindInjected(FleetSoakOptions options, FleetSoakResult result)
    {
        Assert.All(options.FaultKinds, kind => Assert.True(result.Faults[kind] >= 1, $"{kind} was not injected"));
        Assert.True(result.Items > 100, $"only {result.Items} items ran");
    }

    /// <summary>The referee saw no violation (its findings in the message otherwise).</summary>
    public static void AssertNoViolations(FleetSoakResult result) =>
        Assert.True(result.Violations == 0, $"{result}{Environment.NewLine}{Findings(result)}");

    private static string Findings(FleetSoakResult result) => string.Join(Environment.NewLine, result.Findings);
}
