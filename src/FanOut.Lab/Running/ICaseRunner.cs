using FanOut.Lab.Results;
using FanOut.Lab.Scenarios;

namespace FanOut.Lab.Running;

/// <summary>Runs case <c>caseIndex</c> of a scenario and always returns a result: a failure is a result with an error, never an exception.</summary>
public interface ICaseRunner
{
    /// <summary>Runs the case.</summary>
    Task<CaseResult> RunAsync(Scenario scenario, ScenarioSize size, int caseIndex, CancellationToken cancellationToken);
}
