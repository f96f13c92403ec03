using FanOut.FaultInjection;
using FanOut.Tests.Diagnostics;

using Xunit.Abstractions;

namespace FanOut.Tests.FaultInjection;

/// <summary>
/// Randomized fault injection: seeded trials of every overload, source shape, error mode and limit kind, with failing
/// bodies and sources, cancelling callers and consumers that break, several calls sharing one limit. Every failing seed
/// is printed so it replays (<see cref="FaultInjection_KnownSeed_Replays"/>); the soak command runs the same generator longer.
/// </summary>
[Collection(nameof(SerialCollection))]
public sealed class FaultInjectionTests(ITestOutputHelper output)
{
    private const int Trials = 2500;
    private const int FirstSeed = 1;

    [Fact]
    public async Task FaultInjection_ThousandsOfSeededTrials_NoInvariantViolated()
    {
        var failures = new List<string>();
        var unobservedBefore = FaultTrialRunner.UnobservedExceptions;
        for (var seed = FirstSeed; seed < FirstSeed + Trials; seed++)
        {
            var trial = FaultGenerator.Generate(seed);
            var violations = await FaultTrialRunner.RunAsync(trial).WaitAsync(TimeSpan.FromSeconds(30));
            if (violations.Count > 0)
            {
                failures.Add($"{trial}{Environment.NewLine}  {string.Join(Environment.NewLine + "  ", violations)}");
            }
        }

        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        var unobserved = FaultTrialRunner.UnobservedExceptions - unobservedBefore;

        foreach (var failure in failures)
        {
            output.WriteLine(failure);
        }

        Assert.True(failures.Count == 0, $"{failures.Count} of {Trials} trials violated an invariant; first: {failures.FirstOrDefault()}");
        Assert.Equal(0, unobserved);
    }

    [Theory]
    [InlineData(42)]
    [InlineData(2024)]
    public async Task FaultInjection_KnownSeed_Replays(int seed)
    {
        var violations = await FaultTrialRunner.RunAsync(FaultGenerator.Generate(seed)).WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Empty(violations);
    }

    [Fact]
    public void FaultGenerator_SameSeed_SameTrial()
    {
        Assert.Equal(FaultGenerator.Generate(7).ToString(), FaultGenerator.Generate(7).ToString());
        Assert.NotEqual(FaultGenerator.Generate(7).ToString(), FaultGenerator.Generate(8).ToString());
    }
}
