using FanOut.Lab.Results;
using FanOut.Lab.Scenarios;
using FanOut.Lab.Strategies;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Tests.Scenarios;

/// <summary>A two-case scenario small enough for runner tests.</summary>
public sealed class TinyScenario : Scenario
{
    public override string Id => "tiny";

    public override SeedReference Seed { get; } = new("tiny.txt", "claims nothing", "none");

    public override string Describe(ScenarioSize size) => "4 items x 1 ms";

    public override IReadOnlyList<LabCase> Cases(ScenarioSize size) =>
    [
        new(new WhenAllStrategy(), () => new DelayWorkload(DelaySchedule.Fixed(1, 4)), 4, "seed figure"),
        new(new SequentialAwaitStrategy(), () => new DelayWorkload(DelaySchedule.Fixed(1, 4)), 4),
    ];

    public override string Verdict(ScenarioResult measured) => $"{measured.Cases.Count} cases";
}
