using FanOut.Lab.Results;

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

    /// <summary>Labels for <paramref name="cases"/>.</summary>
    public static CaseLabels For(IReadOnlyList<CaseResult> cases)
    {
        ArgumentNullException.ThrowIfNull(cases);
        var vary = cases.Select(c => ResultTable.ParametersText(c.Parameters)).Distinct().Count() > 1;
        var labels = new Dictionary<CaseResult, string>(ReferenceEqualityComparer.Instance);
        foreach (var c in cases)
        {
            labels[c] = vary ? $"{c.Strategy} · {ResultTable.ParametersText(c.Parameters)}" : c.Strategy;
        }

        return new CaseLabels(labels, cases.Select(c => c.Strategy).Distinct().ToList());
    }

    /// <summary>The strategy's index in the scenario: the same colour in every chart.</summary>
    public int Family(CaseResult c)
    {
        ArgumentNullException.ThrowIfNull(c);
        return _strategies.IndexOf(c.Strategy);
    }
}
