using FanOut.Lab.Results;
using FanOut.Lab.Results.Columns;

namespace FanOut.Lab.Reports.Html;

/// <summary>How a scenario's cases are named in its charts: the strategy, plus the parameters when they differ between cases; and a colour index per strategy.</summary>
public sealed class CaseLabels
{
    private readonly Dictionary<CaseResult, string> _labels;
    private readonly List<string> _strategies;

    private CaseLabels(Dictionary<CaseResult, string> labels, List<string> strategies)
    {
        _labels = labels;
        _strategies = strategies;
    }

    /// <summary>The label of <paramref name="c"/>.</summary>
    public string this[CaseResult c] => _labels[c];

    /// <summary>Labels for <paramref name="scenario"/>'s cases: the strategy, then only the parameters that differ between cases.</summary>
    public static CaseLabels For(ScenarioResult scenario)
    {
        ArgumentNullException.ThrowIfNull(scenario);
        var varying = ResultColumns.VaryingParameters(scenario);
        var labels = new Dictionary<CaseResult, string>(ReferenceEqualityComparer.Instance);
        foreach (var c in scenario.Cases)
        {
            var differing = string.Join(' ', varying.Where(c.Parameters.ContainsKey).Select(k => k == "itemCount" ? $"N={c.Parameters[k]}" : $"{k}={c.Parameters[k]}"));
            labels[c] = differing.Length > 0 ? $"{c.Strategy} · {differing}" : c.Strategy;
        }

        return new CaseLabels(labels, scenario.Cases.Select(c => c.Strategy).Distinct().ToList());
    }

    /// <summary>The strategy's index in the scenario: the same colour in every chart.</summary>
    public int Family(CaseResult c)
    {
        ArgumentNullException.ThrowIfNull(c);
        return _strategies.IndexOf(c.Strategy);
    }
}
