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

        var best = eligible[0];
        var runnerUp = eligible.Skip(1).FirstOrDefault(c => Family(c) != Family(best));
        var excluded = compared.Where(c => c.Succeeded && !CompletedEveryItem(c) && c.MeanMs < best.MeanMs).OrderBy(c => c.MeanMs).ToArray();
        var evidence = $"{Describe(best)}" +
            (runnerUp is null ? string.Empty : $"; runner-up {Describe(runnerUp)} ({Ratio(runnerUp.MeanMs / best.MeanMs)}x the time)") +
            (excluded.Length == 0 ? string.Empty : "; faster but failed items: " + string.Join(", ", excluded.Select(c => $"{c.Strategy} {CellText.Time(c.MeanMs)} ({ResultTable.FailuresText(c.Io!)})"))) +
            $" [{scenario.Id}, {ResultTable.ParametersText(best.Parameters)}]";
        return new Recommendation(shape, scenario, best, LimitText(best), runnerUp, excluded, evidence, SeedCheck(shape, best, eligible));
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

        var items = c.Parameters.TryGetValue("itemCount", out var n) ? Convert.ToDouble(n.ToString(), CultureInfo.InvariantCulture) : double.NaN;
        return c.Concurrency >= items
            ? $"none needed: all {CellText.Count(items)} at once ({CellText.Count(c.PeakInFlight)} in flight)"
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
        return ReferenceEquals(advised, best) || ratio <= ContradictionRatio
            ? $"Agrees with {shape.SeedAdvice}: {advised.Strategy} is {(ReferenceEquals(advised, best) ? "the fastest" : $"within {Ratio(ratio)}x of the fastest")} of the cases that completed every item here."
            : $"Contradicts {shape.SeedAdvice}: its best case here, {advised.Strategy}, took {CellText.Time(advised.MeanMs)}, {Ratio(ratio)}x the fastest of the cases that completed every item.";
    }

    private static string Ratio(double ratio) => ratio.ToString(ratio < 10 ? "0.0#" : "N0", CultureInfo.InvariantCulture);
}
