using FanOut.Lab.Results;
using FanOut.Lab.Running;
using FanOut.Lab.Scenarios;

namespace FanOut.Lab.Tests;

/// <summary>Progress that shows nothing, for runner tests.</summary>
public sealed class SilentProgress : ILabProgress
{
    public void ScenarioStarted(Scenario scenario, ScenarioSize size, int caseCount)
    {
    }

    public void CaseStarted(Scenario scenario, LabCase labCase, int caseIndex, int caseCount)
    {
    }

    public void CaseFinished(Scenario scenario, CaseResult result, int caseIndex, int caseCount)
    {
    }

    public void ScenarioFinished(ScenarioResult result)
    {
    }
}
