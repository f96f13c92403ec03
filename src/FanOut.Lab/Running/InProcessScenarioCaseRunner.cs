using FanOut.Lab.Results;
using FanOut.Lab.Scenarios;

namespace FanOut.Lab.Running;

/// <summary><c>--in-process</c>: every case in this process, one after another, on a dedicated thread.</summary>
public sealed class InProcessScenarioCaseRunner(RunPolicy policy) : ICaseRunner
{
    private readonly InProcessCaseRunner _runner = new(policy);

    /// <inheritdoc/>
    public Task<CaseResult> RunAsync(Scenario scenario, ScenarioSize size, int caseIndex, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(scenario);
        var labCase = scenario.Cases(size)[caseIndex];
        var completion = new TaskCompletionSource<CaseResult>(TaskCreationOptions.RunContinuationsAsynchronously);

        // A dedicated thread, not the pool: the case blocks its caller while it runs, and must not take a
        // pool thread away from the strategy it measures.
        var thread = new Thread(() =>
        {
            try
            {
                completion.SetResult(_runner.Run(labCase, cancellationToken));
            }
            catch (Exception ex) when (ex is not OutOfMemoryException)
            {
                var workload = labCase.CreateWorkload();
                completion.SetResult(CaseResult.Failed(labCase.Strategy.Name, workload.Name, CaseParameters.Of(labCase, workload), $"{ex.GetType().Name}: {ex.Message}", labCase.SeedSays));
            }
        })
        { IsBackground = true, Name = "FanOut.Lab case" };
        thread.Start();
        return completion.Task;
    }
}
