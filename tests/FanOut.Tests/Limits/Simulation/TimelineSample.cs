namespace FanOut.Tests.Limits.Simulation;

/// <summary>One point of a simulation's timeline (LimitSimulation's, or the fleet's in FanOut.Redis.Tests).</summary>
/// <param name="At">The time since the start.</param>
/// <param name="Limit">The limit (a fleet's budget as its first limit sees it).</param>
/// <param name="InFlight">The permits taken.</param>
/// <param name="Capacity">The downstream's capacity.</param>
public readonly record struct TimelineSample(TimeSpan At, int Limit, int InFlight, int Capacity);
