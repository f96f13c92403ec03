using FanOut.Lab.Results;
using FanOut.Lab.Scenarios;

namespace FanOut.Lab.Running;

/// <summary>Runs scenarios case by case, saving every result as soon as it exists.</summary>
public sealed class LabRunner(ICaseRunner caseRunner, ResultsDirectory? output, ILabProgress progress)
{
    /// <summary>Runs <paramref name="scenarios"/> at <paramref name="size"/>; on cancellation returns what finished.</summary>
    public async Task<LabResults> RunAsync(IReadOnlyList<Scenario> scenarios, ScenarioSize size, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(scenarios);
        ArgumentNullException.ThrowIfNull(size);
        var finished = new List<ScenarioResult>();
        var results = new LabResults { Machine = MachineInfo.Current(), StartedAt = DateTimeOffset.UtcNow, Scenarios = finished };
        foreach (var scenario in scenarios)
        {
            var cases = scenario.Cases(size);
            var caseResults = new List<CaseResult>();
            var current = Open(scenario, size, caseResults);
            finished.Add(current);
            progress.ScenarioStarted(scenario, size, cases.Count);
            for (var i = 0; i < cases.Count; i++)
            {
                if (cancellationToken.IsCancellationRequested)
                {
                    return results;
                }

                progress.CaseStarted(scenario, cases[i], i, cases.Count);
                CaseResult result;
                try
                {
                    result = await caseRunner.RunAsync(scenario, size, i, cancellationToken).ConfigureAwait(false);
                }
                catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
                {
                    return results;
                }

                caseResults.Add(result);
                output?.Write(results);
                progress.CaseFinished(scenario, result, i, cases.Count);
            }

            var done = current with { Verdict = scenario.Verdict(current) };
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
