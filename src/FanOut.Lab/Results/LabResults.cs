namespace FanOut.Lab.Results;

/// <summary>The whole of results.json: the machine and every scenario run so far.</summary>
public sealed record LabResults
{
    /// <summary>Format version of this contract.</summary>
    public int SchemaVersion { get; init; } = 1;

    /// <summary>The machine.</summary>
    public required MachineInfo Machine { get; init; }

    /// <summary>When the run started (UTC).</summary>
    public required DateTimeOffset StartedAt { get; init; }

    /// <summary>The scenarios, in run order.</summary>
    public required IReadOnlyList<ScenarioResult> Scenarios { get; init; }
}
