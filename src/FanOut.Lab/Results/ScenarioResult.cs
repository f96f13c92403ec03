namespace FanOut.Lab.Results;

/// <summary>A scenario's cases as they finish: the element of <c>scenarios[]</c> in results.json.</summary>
public sealed record ScenarioResult
{
    /// <summary>Scenario id.</summary>
    public required string Id { get; init; }

    /// <summary>The seed file it reproduces.</summary>
    public required string Seed { get; init; }

    /// <summary>The seed's claim.</summary>
    public required string SeedClaim { get; init; }

    /// <summary>The machine behind the seed's numbers.</summary>
    public required string SeedMachine { get; init; }

    /// <summary>The scale used.</summary>
    public required double Scale { get; init; }

    /// <summary>True when the seed's whole grid ran.</summary>
    public required bool Full { get; init; }

    /// <summary>Where this machine agrees or disagrees with the seed, once the cases ran.</summary>
    public string? Verdict { get; init; }

    /// <summary>The finished cases, in table order.</summary>
    public required IReadOnlyList<CaseResult> Cases { get; init; }
}
