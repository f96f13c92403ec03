using FanOut.Lab.Results;

namespace FanOut.Lab.Tests.Results;

/// <summary>A scenario's result around cases a test made up, the seed's fields placeholders: what a verdict, a table or a recommendation reads.</summary>
internal static class ScenarioResults
{
    /// <summary>Scenario <paramref name="id"/>'s result with <paramref name="cases"/> (seed "s", claim "c", machine "m", scale 1, not full).</summary>
    public static ScenarioResult Of(string id, params CaseResult[] cases) => new()
    {
        Id = id,
        Seed = "s",
        SeedClaim = "c",
        SeedMachine = "m",
        Scale = 1,
        Full = false,
        Cases = cases,
    };
}
