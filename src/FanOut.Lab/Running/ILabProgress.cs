using FanOut.Lab.Results;
using FanOut.Lab.Scenarios;

namespace FanOut.Lab.Running;

/// <summary>What a run tells the person watching it. Called from the one thread that drives the run.</summary>
public interface ILabProgress
{
    /// <summary>A scenario is about to start.</summary>
    void ScenarioStarted(Scenario scenario, ScenarioSize size, int caseCount);

    /// <summary>A case is about to start.</summary>
    void CaseStarted(Scenario scenario, LabCase labCase, int caseIndex, int caseCount);

    /// <summary>A case finished (or failed) and its result is already on disk.</summary>
    void CaseFinished(Scenario scenario, CaseResult result, int caseIndex, int caseCount);

    /// <summary>A scenario finished.</summary>
    void ScenarioFinished(ScenarioResult result);

    /// <summary>Before anything runs: the estimated duration of the whole run (only when the runner has an estimate).</summary>
    void RunEstimated(TimeSpan estimate, int caseCount)
    {
    }

    /// <summary>Before each case, the estimated time left with it; after it, without it (only when the runner has an estimate).</summary>
    void TimeLeft(TimeSpan remaining)
    {
    }
}
