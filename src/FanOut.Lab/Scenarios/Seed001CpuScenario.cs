using FanOut.Lab.Results;
using FanOut.Lab.Strategies;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Scenarios;

/// <summary>Seed 001, CPU half: OperationCount x CalculationCount of <c>Math.Pow(i, 2)</c>, WhenAll (synchronous lambda) against ForEachAsync.</summary>
public sealed class Seed001CpuScenario : Scenario
{
    private static readonly int[] s_fullCounts = [1, 10, 50, 100];
    private static readonly int[] s_fullCalculations = [1_000, 10_000, 50_000, 100_000];
    private static readonly int[] s_defaultCounts = [1, 100];
    private static readonly int[] s_defaultCalculations = [1_000, 100_000];

    /// <inheritdoc/>
    public override string Id => "seed001-cpu";

    /// <inheritdoc/>
    public override string Purpose => "CPU-bound work: Task.WhenAll over synchronous bodies against Parallel.ForEachAsync";

    /// <inheritdoc/>
    public override SeedReference Seed { get; } = new(
        "001_8d33c7003962ea02.txt",
        "ForEachAsync for CPU. 1 x 1,000: WhenAll 1.030 us, ForEachAsync 4.055 us; 100 x 1,000: 23.924 us vs 212.827 us; 100 x 100,000: 2,183.321 us vs 326.563 us.",
        "AMD Ryzen 7 5700X, 16 logical cores, Windows 11, .NET 8; BenchmarkDotNet 0.13.11");

    /// <inheritdoc/>
    public override string Describe(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        var counts = size.Pick(s_fullCounts, s_defaultCounts);
        var calcs = size.Pick(s_fullCalculations, s_defaultCalculations);
        return $"OperationCount {{{string.Join(", ", counts)}}} x Math.Pow x {{{string.Join(", ", calcs.Select(c => size.Work(c).ToString("N0", System.Globalization.CultureInfo.InvariantCulture)))}}}" + (size.Full ? " (seed's full grid)" : " (subset; --full for the seed's grid)");
    }

    /// <inheritdoc/>
    public override IReadOnlyList<LabCase> Cases(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        var cases = new List<LabCase>();
        foreach (var count in size.Pick(s_fullCounts, s_defaultCounts))
        {
            foreach (var calculations in size.Pick(s_fullCalculations, s_defaultCalculations))
            {
                var work = size.Work(calculations);
                Workload Pow() => new PowLoopWorkload(work);
                cases.Add(new(new WhenAllStrategy(), Pow, count, SeedNumber(count, calculations, whenAll: true)));
                cases.Add(new(new ParallelForEachAsyncStrategy(), Pow, count, SeedNumber(count, calculations, whenAll: false)));
                cases.Add(new(FanOutStrategy.Fixed(Environment.ProcessorCount), Pow, count));
                cases.Add(new(FanOutStrategy.Adaptive(), Pow, count));
            }
        }

        return cases;
    }

    /// <inheritdoc/>
    public override string Verdict(ScenarioResult measured)
    {
        ArgumentNullException.ThrowIfNull(measured);
        var count = Find.Max(measured, "itemCount");
        var calcs = Find.Max(measured, "calculationCount");
        if (count is not { } n || calcs is not { } c)
        {
            return "Not enough cases finished to compare with the seed.";
        }

        var whenAll = Find.Case(measured, "Task.WhenAll", ("itemCount", n), ("calculationCount", c));
        var forEach = Find.Case(measured, "Parallel.ForEachAsync", ("itemCount", n), ("calculationCount", c));
        if (whenAll is null || forEach is null)
        {
            return "Not enough cases finished to compare with the seed.";
        }

        // The opening says what this run's table shows: on a busy machine the parallel loop can lose to the sequential one.
        var speedUp = whenAll.MeanMs / forEach.MeanMs;
        var opening = speedUp > 1
            ? "Agrees that ForEachAsync wins on heavy CPU work"
            : $"Disagrees here: ForEachAsync did not win on heavy CPU work in this run (its cores were busy with other work: efficiency {forEach.Efficiency:P0})";
        return $"{opening}, and the seed's \"WhenAll\" is sequential code: its lambda is synchronous, so every loop runs on the calling thread " +
            $"inside ToArray() (peak in flight measured here: {whenAll.PeakInFlight:N0}). At {n} x {c:N0}: WhenAll {Find.Ms(whenAll.MeanMs)}, ForEachAsync {Find.Ms(forEach.MeanMs)}, " +
            $"a {speedUp:N2}x speed-up where {Environment.ProcessorCount} cores cap it at {Environment.ProcessorCount}x (the seed's 16 cores: 6.7x). " +
            "On tiny items the fixed cost of starting ForEachAsync's workers dominates, as in the seed.";
    }

    private static string? SeedNumber(int count, int calculations, bool whenAll) => (count, calculations) switch
    {
        (1, 1_000) => whenAll ? "1.030 us" : "4.055 us",
        (100, 1_000) => whenAll ? "23.924 us" : "212.827 us",
        (100, 100_000) => whenAll ? "2,183.321 us" : "326.563 us",
        _ => null,
    };
}
