using System.Globalization;

using FanOut.Lab.Results;
using FanOut.Lab.Results.Columns;

namespace FanOut.Lab.Reports.Recommendations;

/// <summary>Turns a run into advice: per workload shape, the fastest strategy that completed every item, its limit, the runner-up and the evidence.</summary>
/// <remarks>
/// Cases are compared at one size: the heaviest parameter set the scenario ran (highest mean time), where strategies
/// differ most. "Within the downstream's means" is read from the outcome: a case with failed items (429s, refused
/// connections) exceeded them and is listed as excluded, not recommended, however fast it finished.
/// </remarks>
public static class RecommendationBuilder
{
    /// <summary>A seed's advised strategy counts as contradicted when its best case is this much slower than the winner.</summary>
    private const double ContradictionRatio = 1.1;

    /// <summary>One recommendation per shape whose scenario has finished cases in <paramref name="results"/>.</summary>
    public static IReadOnlyList<Recommendation> Build(LabResults results)
    {
        ArgumentNullException.ThrowIfNull(results);
        var recommendations = new List<Recommendation>();
        foreach (var shape in WorkloadShape.All)
        {
            var scenario = results.Scenarios.FirstOrDefault(s => s.Id == shape.ScenarioId);
            if (scenario is not null && For(shape, scenario) is { } recommendation)
            {
                recommendations.Add(recommendation);
            }
        }

        return recommendations;
    }

    /// <summary>The recommendation for <paramref name="shape"/> from <paramref name="scenario"/>, or null when no case completed every item.</summary>
    public static Recommendation? For(WorkloadShape shape, ScenarioResult scenario)
    {
        ArgumentNullException.ThrowIfNull(shape);
        ArgumentNullException.ThrowIfNull(scenario);
        var compared = HeaviestGroup(scenario);
        var eligible = compared.Where(CompletedEveryItem).OrderBy(c => c.MeanMs).ToArray();
        if (eligible.Length == 0)
        {
            return null;
        }

        if (shape.NoKnownLimit)
        {
            return ForUnknownLimit(shape, scenario, eligible);
        }

        // A row with no bound is advised only when nothing bounded completed: FO0003 flags it, and the advice must not.
        var bounded = eligible.Where(c => !Unbounded(c)).ToArray();
        var candidates = bounded.Length > 0 ? bounded : eligible;
        var best = candidates[0];
        var runnerUp = candidates.Skip(1).FirstOrDefault(c => Family(c) != Family(best));
        var failed = compared.Where(c => c.Succeeded && !CompletedEveryItem(c) && c.MeanMs < best.MeanMs).OrderBy(c => c.MeanMs).ToArray();
        var unbounded = bounded.Length > 0 ? eligible.Where(c => Unbounded(c) && c.MeanMs < best.MeanMs).ToArray() : [];
        var evidence = $"{Describe(best)}" +
            (runnerUp is null ? string.Empty : $"; runner-up {Describe(runnerUp)} ({Ratio(runnerUp.MeanMs / best.MeanMs)}x the time)") +
            (failed.Length == 0 ? string.Empty : "; faster but failed items: " + string.Join(", ", failed.Select(c => $"{c.Strategy} {CellText.Time(c.MeanMs)} ({ResultTable.FailuresText(c.Io!)})"))) +
            (unbounded.Length == 0 ? string.Empty : "; faster with no bound: " + string.Join(", ", unbounded.Select(c => $"{c.Strategy} {CellText.Time(c.MeanMs)} with {CellText.Count(c.PeakInFlight)} in flight"))) +
            $" [{scenario.Id}, {ResultTable.ParametersText(best.Parameters)}]";
        return new Recommendation(shape, scenario, best, LimitText(best), runnerUp, [.. failed, .. unbounded], evidence, UnboundedSeedCheck(shape, best, eligible));
    }

    /// <summary>
    /// I/O whose downstream limit nobody knows: FanOut's default (the row whose limit settled somewhere, which only an
    /// adaptive limit reports), compared as the lab's verdict compares it, with the rows that kept at most its maximum in
    /// flight; an unbounded row is quoted, never advised, however fast it ran against a wait nothing limits.
    /// </summary>
    private static Recommendation ForUnknownLimit(WorkloadShape shape, ScenarioResult scenario, IReadOnlyList<CaseResult> eligible)
    {
        var maxLimit = new AdaptiveLimitOptions().MaxLimit;
        var bounded = eligible.Where(c => !Unbounded(c)).ToArray();
        var best = bounded.FirstOrDefault(c => c.LimitFinal is not null) ?? bounded.FirstOrDefault() ?? eligible[0];
        var runnerUp = bounded.FirstOrDefault(c => !ReferenceEquals(c, best) && Family(c) != Family(best));
        var unbounded = eligible.Where(c => Unbounded(c) && c.MeanMs < best.MeanMs).ToArray();
        var fastestWithin = eligible.Where(c => c.PeakInFlight <= maxLimit).MinBy(c => c.MeanMs);
        var scope = fastestWithin is null || ReferenceEquals(fastestWithin, best)
            ? $"the fastest row with at most {maxLimit} in flight"
            : $"{Ratio(best.MeanMs / fastestWithin.MeanMs)}x the fastest row with at most {maxLimit} in flight ({fastestWithin.Strategy} {CellText.Time(fastestWithin.MeanMs)})";
        var evidence = $"{Describe(best)}: {scope}" +
            (runnerUp is null ? string.Empty : $"; runner-up {Describe(runnerUp)} ({Ratio(runnerUp.MeanMs / best.MeanMs)}x the time)") +
            (unbounded.Length == 0 ? string.Empty : "; faster with no bound: " + string.Join(", ", unbounded.Select(c => $"{c.Strategy} {CellText.Time(c.MeanMs)} with {CellText.Count(c.PeakInFlight)} in flight"))) +
            $" [{scenario.Id}, {ResultTable.ParametersText(best.Parameters)}]";
        var limit = best.LimitFinal is { } settled
            ? $"none to choose: FanOut's default starts at {new AdaptiveLimitOptions().InitialLimit}, grows while latency holds and backs off on overload (at most {maxLimit}); here it settled at {CellText.Count(settled)} (peak {CellText.Count(best.LimitPeak ?? settled)})"
            : LimitText(best);
        return new Recommendation(shape, scenario, best, limit, runnerUp, unbounded, evidence, UnboundedSeedCheck(shape, best, eligible));
    }

    /// <summary>True for a row with no limit of its own: everything at once.</summary>
    private static bool Unbounded(CaseResult c) => c.LimitFinal is null && c.Concurrency >= ItemCount(c);

    private static double ItemCount(CaseResult c) =>
        c.Parameters.TryGetValue("itemCount", out var n) ? Convert.ToDouble(n.ToString(), CultureInfo.InvariantCulture) : double.NaN;

    /// <summary>A seed's advice for a row with no bound (Task.WhenAll) that beat the advice: its time and what it kept in flight, not a verdict to follow; otherwise <see cref="SeedCheck"/>.</summary>
    private static string UnboundedSeedCheck(WorkloadShape shape, CaseResult best, IReadOnlyList<CaseResult> eligible)
    {
        var advised = shape.AdvisedPrefix is { } prefix ? eligible.FirstOrDefault(c => c.Strategy.StartsWith(prefix, StringComparison.Ordinal)) : null;
        if (advised is null || ReferenceEquals(advised, best) || !Unbounded(advised) || advised.MeanMs > best.MeanMs)
        {
            return SeedCheck(shape, best, eligible);
        }

        var against = shape.NoKnownLimit ? ", against a wait nothing limits; it has no bound for a downstream that has one" : "; it has no bound";
        return $"Measured, not advised ({shape.SeedAdvice}): {advised.Strategy} took {CellText.Time(advised.MeanMs)} with {CellText.Count(advised.PeakInFlight)} in flight, " +
            $"{Ratio(advised.MeanMs / best.MeanMs)}x the time of {best.Strategy}{against} (analyzer FO0003 flags it; see a downstream with a capacity).";
    }

    /// <summary>True when the case ran and none of its items failed.</summary>
    public static bool CompletedEveryItem(CaseResult c)
    {
        ArgumentNullException.ThrowIfNull(c);
        return c.Succeeded && (c.Io is null || c.Io.Failures == 0);
    }

    private static IReadOnlyList<CaseResult> HeaviestGroup(ScenarioResult scenario) =>
        scenario.Cases.Where(c => c.Succeeded)
            .GroupBy(c => SizeKey(c.Parameters))
            .OrderByDescending(g => g.Average(c => c.MeanMs))
            .Select(g => (IReadOnlyList<CaseResult>)g.ToArray())
            .FirstOrDefault() ?? [];

    /// <summary>The numeric parameters (N, durations, work counts): cases with the same ones are the same work.</summary>
    private static string SizeKey(IReadOnlyDictionary<string, object> parameters) =>
        string.Join(' ', parameters.Where(p => p.Value is not bool && p.Value.ToString() is not ("True" or "False")).Select(p => $"{p.Key}={p.Value}"));

    private static string Family(CaseResult c)
    {
        var name = c.Strategy;
        var paren = name.IndexOf(" (", StringComparison.Ordinal);
        return paren > 0 ? name[..paren] : name;
    }

    private static string LimitText(CaseResult c)
    {
        if (c.LimitFinal is { } settled)
        {
            return $"adaptive (settled at {CellText.Count(settled)}, peak {CellText.Count(c.LimitPeak ?? settled)})";
        }

        return Unbounded(c)
            ? $"no limit ({CellText.Count(c.PeakInFlight)} in flight)"
            : $"{c.Concurrency} ({CellText.Count(c.PeakInFlight)} in flight)";
    }

    private static string Describe(CaseResult c) =>
        $"{ResultTable.StrategyText(c)} {CellText.Time(c.MeanMs)}" +
        (c.Io is { } io ? $", {io.SuccessesPerSecond.ToString("N0", CultureInfo.InvariantCulture)} ok/s" : $", efficiency {CellText.Ratio(c.Efficiency)}") +
        $", {CellText.Count(c.PeakInFlight)} in flight, {CellText.Count(c.ThreadPoolThreadsPeak)} pool threads";

    private static string SeedCheck(WorkloadShape shape, CaseResult best, IReadOnlyList<CaseResult> eligible)
    {
        if (shape.AdvisedPrefix is not { } prefix)
        {
            return $"The seeds give no advice here ({shape.SeedAdvice}).";
        }

        var advised = eligible.FirstOrDefault(c => c.Strategy.StartsWith(prefix, StringComparison.Ordinal));
        if (advised is null)
        {
            return $"Seed advice ({shape.SeedAdvice}): not measured at this size, or every such case failed items.";
        }

        var ratio = advised.MeanMs / best.MeanMs;
        var cases = ReferenceEquals(eligible[0], best) ? "cases" : "bounded cases";
        return ReferenceEquals(advised, best) || ratio <= ContradictionRatio
            ? $"Agrees with {shape.SeedAdvice}: {advised.Strategy} is {(ReferenceEquals(advised, best) ? "the fastest" : $"within {Ratio(ratio)}x of the fastest")} of the {cases} that completed every item here."
            : $"Contradicts {shape.SeedAdvice}: its best case here, {advised.Strategy}, took {CellText.Time(advised.MeanMs)}, {Ratio(ratio)}x the fastest of the {cases} that completed every item.";
    }

    private static string Ratio(double ratio) => ratio.ToString(ratio < 10 ? "0.0#" : "N0", CultureInfo.InvariantCulture);
}
