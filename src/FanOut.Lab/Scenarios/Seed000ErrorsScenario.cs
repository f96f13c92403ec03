using FanOut.Lab.Outcomes;
using FanOut.Lab.Results;
using FanOut.Lab.Results.Columns;
using FanOut.Lab.Running;
using FanOut.Lab.Strategies;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Scenarios;

/// <summary>Seed 000's decision-matrix rows "On first exception" and "Exception surface": N waiting items, one or several of which throw.</summary>
public sealed class Seed000ErrorsScenario : Scenario
{
    /// <summary>N.</summary>
    public const int Items = 100;

    /// <summary>The item that throws in the one-failure variant, and the first of the several-failures variant.</summary>
    public const int FirstFailing = 10;

    private const int DelayMs = 10;
    private const int Limit = 50;

    /// <summary>The several-failures variant: one item in every twenty from <see cref="FirstFailing"/> on.</summary>
    private static readonly int[] s_severalFailing = [FirstFailing, 30, 50, 70, 90];

    /// <summary>Each run is short (under a second) and the outcome is a count: three runs say whether it varies.</summary>
    private static readonly RunPolicy s_policy = new(1, 3, 3, TimeSpan.FromSeconds(1));

    /// <inheritdoc/>
    public override string Id => "seed000-errors";

    /// <inheritdoc/>
    public override string Purpose => "An item throws: what each API still starts, finishes and lets you catch";

    /// <inheritdoc/>
    public override SeedReference Seed { get; } = new(
        "000_501b81ed9e953635.txt",
        "On first exception: Parallel.ForEach stops launching iterations; Parallel.ForEachAsync cancels its token and stops scheduling new items; Task.WhenAll lets every task run to completion. Exception surface: AggregateException; await unwraps to the first exception.",
        "decision matrix, stated without measurement");

    /// <inheritdoc/>
    public override string Describe(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        return $"{Items} items x wait {size.Ms(DelayMs)}ms; item {FirstFailing} throws, or items {string.Join(',', s_severalFailing)} throw";
    }

    /// <inheritdoc/>
    public override IReadOnlyList<LabCase> Cases(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        var ms = size.Ms(DelayMs);
        var cases = new List<LabCase>();
        foreach (var failing in new[] { [FirstFailing], s_severalFailing })
        {
            Workload Failing() => new FailingWorkload(Items, ms, failing);
            foreach (var (strategy, seedSays) in Strategies())
            {
                cases.Add(new(new ObservedStrategy(strategy), Failing, Items, seedSays, s_policy));
            }
        }

        return cases;
    }

    /// <inheritdoc/>
    public override string Verdict(ScenarioResult measured)
    {
        ArgumentNullException.ThrowIfNull(measured);
        var one = Strategies().Select(s => (s.Strategy.Name, Case: Find.Case(measured, s.Strategy.Name, ("failing", 1)))).ToArray();
        if (one.Any(c => c.Case?.Outcome is null))
        {
            return "Not enough cases finished to compare with the seed.";
        }

        string Row(string name)
        {
            var o = one.First(c => c.Name == name).Case!.Outcome!;
            return $"{name} started {CellText.Count(o.StartedAfterTrigger)} items after it, completed {CellText.Count(o.Completed)} of {Items} and returned {Find.Ms(o.StopMs ?? 0)} after it";
        }

        var verdict = $"On first exception (item {FirstFailing} of {Items} throws after its wait): {Row("Parallel.ForEach (default)")} (seed: stops launching iterations); " +
            $"{Row("Parallel.ForEachAsync (default)")}, {Row("Parallel.ForEachAsync (DOP 50)")} (seed: cancels its token, stops scheduling); " +
            $"{Row("Task.WhenAll")} (seed: every task runs to completion); {Row("SemaphoreSlim(50) + WhenAll")}; {Row("FanOut (Fixed 50)")}; {Row("FanOut (Fixed 50, RunAll)")}.";
        var several = Strategies().Select(s => Find.Case(measured, s.Strategy.Name, ("failing", s_severalFailing.Length))).Where(c => c?.Outcome is not null).Select(c => c!).ToArray();
        if (several.Length > 0)
        {
            verdict += $" Exception surface with {s_severalFailing.Length} failing items: " +
                string.Join("; ", several.Select(c => $"{c.Strategy}: threw {c.Outcome!.Threw}, {CellText.Count(c.Outcome.FailuresReachable)} of {CellText.Count(c.Outcome.Failed)} failures reachable" +
                    (c.Outcome.FailuresIndexedByApi > 0 ? $", {CellText.Count(c.Outcome.FailuresIndexedByApi)} tied to their index by the API" : string.Empty))) +
                ". Only an exception that names its item (as the lab's does) ties a failure to its item, except in FanOut RunAll's per-index failures.";
        }

        return verdict;
    }

    private static IEnumerable<(Strategy Strategy, string SeedSays)> Strategies() =>
    [
        (new ParallelForEachStrategy(), "stops launching iterations; AggregateException"),
        (new ParallelForEachAsyncStrategy(), "cancels token, stops scheduling; await: first"),
        (new ParallelForEachAsyncStrategy(Limit), "cancels token, stops scheduling; await: first"),
        (new WhenAllStrategy(), "every task runs to completion; await: first"),
        (new SemaphoreSlimWhenAllStrategy(Limit), string.Empty),
        (FanOutStrategy.Fixed(Limit), string.Empty),
        (FanOutStrategy.Fixed(Limit, ErrorMode.RunAll), string.Empty),
    ];
}
