using FanOut.Lab.Results;

namespace FanOut.Lab.Reports.Recommendations;

/// <summary>What to use for one workload shape on this machine, and the rows that say so.</summary>
/// <param name="Shape">The kind of work.</param>
/// <param name="Scenario">The scenario measured.</param>
/// <param name="Best">The fastest case that completed every item (the downstream's means respected).</param>
/// <param name="Limit">The concurrency to use, as text.</param>
/// <param name="RunnerUp">The fastest eligible case of another strategy, or null.</param>
/// <param name="Excluded">Faster cases left out, the evidence says why: items failed (the downstream turned them away), or, where no downstream limit is known, the case had no bound.</param>
/// <param name="Evidence">The figures, in a sentence.</param>
/// <param name="SeedCheck">Where the seeds' advice is confirmed or contradicted here.</param>
public sealed record Recommendation(
    WorkloadShape Shape,
    ScenarioResult Scenario,
    CaseResult Best,
    string Limit,
    CaseResult? RunnerUp,
    IReadOnlyList<CaseResult> Excluded,
    string Evidence,
    string SeedCheck)
{
    /// <summary>The rows the evidence quotes: the best, the runner-up, then the excluded.</summary>
    public IReadOnlyList<CaseResult> Rows => [Best, .. RunnerUp is null ? Array.Empty<CaseResult>() : [RunnerUp], .. Excluded];
}
