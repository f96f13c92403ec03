using FanOut.Lab.Results;

namespace FanOut.Lab.Scenarios;

/// <summary>One seed experiment: its cases at a given size, and how to read our numbers against the seed's.</summary>
public abstract class Scenario
{
    /// <summary>The id used on the command line, e.g. <c>seed000-fanout500</c>.</summary>
    public abstract string Id { get; }

    /// <summary>What the scenario finds out, in a line a person choosing one can read (<c>fanout list</c>); empty when not said.</summary>
    public virtual string Purpose => string.Empty;

    /// <summary>The seed this scenario reproduces.</summary>
    public abstract SeedReference Seed { get; }

    /// <summary>One line: what is run, at what size.</summary>
    public abstract string Describe(ScenarioSize size);

    /// <summary>The cases, in table order.</summary>
    public abstract IReadOnlyList<LabCase> Cases(ScenarioSize size);

    /// <summary>One line: where this machine agrees or disagrees with the seed's conclusion, and why.</summary>
    public abstract string Verdict(ScenarioResult measured);
}
