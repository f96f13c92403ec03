using FanOut.Lab.Results;
using FanOut.Lab.Scenarios;

namespace FanOut.Lab.Running;

/// <summary>Runs scenarios case by case, saving every result as soon as it exists.</summary>
public sealed class LabRunner(ICaseRunner caseRunner, ResultsDirectory? output, ILabProgress progress)
{
    /// <summary>The default adaptive limit's maximum: the verdicts compare FanOut's default with rows that kept no more in flight.</summary>
    private static readonly int s_defaultMaxLimit = new AdaptiveLimitOptions().MaxLimit;

    /// <summary>How to estimate the run's duration, shown before it starts and as time left; null shows none.</summary>
    public RunEstimate? Estimate { get; init; }

    /// <summary>Runs <paramref name="scenarios"/> at <paramref name="size"/>; on cancellation returns what finished.</summary>
    public async Task<LabResults> RunAsync(IReadOnlyList<Scenario> scenarios, ScenarioSize size, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(scenarios);
        ArgumentNullException.ThrowIfNull(size);
        var finished = new List<ScenarioResult>();
        var results = new LabResults { Machine = MachineInfo.Current(), StartedAt = DateTimeOffset.UtcNow, Scenarios = finished };
        var estimates = Estimate is null ? null : scenarios.Select(s => Estimate.For(s, size)).ToArray();
        var remaining = estimates is null ? TimeSpan.Zero : estimates.SelectMany(e => e).Aggregate(TimeSpan.Zero, (a, b) => a + b);
        if (estimates is not null)
        {
            progress.RunEstimated(remaining, estimates.Sum(e => e.Count));
        }

        for (var s = 0; s < scenarios.Count; s++)
        {
            var scenario = scenarios[s];
            var cases = scenario.Cases(size);
            var caseResults = new List<CaseResult>();
            var current = Open(scenario, size, caseResults);
            finished.Add(current);
            progress.ScenarioStarted(scenario, size, cases.Count);
            for (var i = 0; i < cases.Count; i++)
            {
                if (cancellationToken.IsCancellationRequested)
                {
                    output?.Write(results);
                    return results;
                }

                if (estimates is not null)
                {
                    progress.TimeLeft(remaining);
                    remaining -= i < estimates[s].Count ? estimates[s][i] : TimeSpan.Zero;
                }

                progress.CaseStarted(scenario, cases[i], i, cases.Count);
                CaseResult result;
                try
                {
                    result = await caseRunner.RunAsync(scenario, size, i, cancellationToken).ConfigureAwait(false);
                }
                catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
                {
                    output?.Write(results);
                    return results;
                }

                caseResults.Add(result);
                output?.Write(results, html: false);
                if (estimates is not null)
                {
                    progress.TimeLeft(remaining);
                }

                progress.CaseFinished(scenario, result, i, cases.Count);
            }

            var done = current with { Verdict = DefaultLimitVerdict.Append(scenario.Verdict(current), current, s_defaultMaxLimit) };
            finished[^1] = done;
            output?.Write(results);
            progress.ScenarioFinished(done);
        }

        return results;
    }

    private static ScenarioResult Open(Scenario scenario, ScenarioSize size, List<CaseResult> cases) => new()
    {
        Id = scenario.Id,
        Seed = scenario.Seed.File,
        SeedClaim = scenario.Seed.Claim,
        SeedMachine = scenario.Seed.Machine,
        Scale = size.Scale,
        Full = size.Full,
        Cases = cases,
    };
}
