using System.Globalization;

using FanOut.Lab.Results;
using FanOut.Lab.Results.Columns;

namespace FanOut.Lab.Scenarios;

/// <summary>
/// The sentence every scenario's verdict ends with: what FanOut's default (the adaptive limit, told nothing) did in each of
/// the scenario's parameter sets. Without real I/O: its time against the fastest row that kept no more in flight than the
/// default's maximum (the comparison issue 8 sets); with real I/O: how many items succeeded and what the server refused.
/// A row is the default's when it reports where its limit settled (<see cref="CaseResult.LimitFinal"/>), which only an
/// adaptive limit does.
/// </summary>
public static class DefaultLimitVerdict
{
    /// <summary>The sentence, or an empty string when the scenario has no finished row of FanOut's default.</summary>
    /// <param name="measured">The scenario's results.</param>
    /// <param name="maxInFlight">The default's maximum limit: faster rows that kept more in flight are not compared.</param>
    public static string Describe(ScenarioResult measured, int maxInFlight)
    {
        ArgumentNullException.ThrowIfNull(measured);
        var parts = new List<string>();
        foreach (var group in measured.Cases.Where(c => c.Succeeded).GroupBy(c => ResultTable.ParametersText(c.Parameters)))
        {
            foreach (var row in group.Where(c => c.LimitFinal is not null))
            {
                parts.Add($"{Where(row, group.Key)}: {(row.Io is { } io ? DescribeIo(row, io) : DescribeTime(row, group, maxInFlight))}");
            }
        }

        return parts.Count == 0 ? string.Empty : $"FanOut's default: {string.Join("; ", parts)}.";
    }

    /// <summary>Appends <see cref="Describe"/> to a scenario's own verdict.</summary>
    public static string Append(string verdict, ScenarioResult measured, int maxInFlight)
    {
        ArgumentNullException.ThrowIfNull(verdict);
        var sentence = Describe(measured, maxInFlight);
        return sentence.Length == 0 ? verdict : $"{verdict} {sentence}";
    }

    private static string Where(CaseResult row, string parameters) => $"{row.Strategy} at {parameters}";

    private static string DescribeTime(CaseResult row, IEnumerable<CaseResult> group, int maxInFlight)
    {
        // "The fastest row" only when no row of the table beside it is faster; otherwise the claim says its scope.
        var rows = group.ToArray();
        var overall = rows.MinBy(c => c.MeanMs)!;
        var fastest = rows.Where(c => c.PeakInFlight <= maxInFlight).MinBy(c => c.MeanMs);
        var scope = $"the fastest row with at most {maxInFlight} in flight";
        var faster = $"{overall.Strategy} took {Find.Ms(overall.MeanMs)} with {CellText.Count(overall.PeakInFlight)} in flight";
        var comparison = ReferenceEquals(overall, row)
            ? "the fastest row"
            : fastest is null || ReferenceEquals(fastest, row)
                ? $"{scope} ({faster})"
                : $"{(row.MeanMs / fastest.MeanMs).ToString("N2", CultureInfo.InvariantCulture)}x {scope} ({fastest.Strategy} {Find.Ms(fastest.MeanMs)})";
        return $"{Find.Ms(row.MeanMs)}, {comparison}, {Limit(row)}";
    }

    private static string DescribeIo(CaseResult row, IoResult io)
    {
        var items = Find.Number(row, "itemCount") ?? io.Successes + io.Failures;
        var refused = io.Rejected429 is { } rejected
            ? $", the server answered 429 to {CellText.Count(rejected)} calls ({Percent(rejected, io.Successes + io.Failures)} of calls)"
            : string.Empty;
        return $"{CellText.Count(io.Successes)} of {CellText.Count(items)} items ok at {CellText.Count(io.SuccessesPerSecond)} ok/s in {Find.Ms(row.MeanMs)}{refused}, {Limit(row)}";
    }

    private static string Limit(CaseResult row) =>
        $"limit settled at {CellText.Count(row.LimitFinal ?? 0)} (peak {CellText.Count(row.LimitPeak ?? 0)})";

    private static string Percent(double part, double whole) =>
        whole > 0 ? (part / whole).ToString("P1", CultureInfo.InvariantCulture) : "0 %";
}
