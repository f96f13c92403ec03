namespace FanOut.Lab.Workloads;

/// <summary>What one item of a workload costs, as the ideal-time model sees it.</summary>
/// <param name="WaitMs">Milliseconds each item waits (a delay, a sleep, a blocked call), by item index; empty when it never waits.</param>
/// <param name="UsesCpu">True when items burn CPU, whose cost the lab measures by running a few items alone.</param>
public sealed record WorkProfile(IReadOnlyList<int> WaitMs, bool UsesCpu)
{
    /// <summary>A workload that only computes.</summary>
    public static WorkProfile Cpu { get; } = new([], true);

    /// <summary>True when items wait for anything.</summary>
    public bool Waits => WaitMs.Count > 0;
}
