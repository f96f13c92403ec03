using FanOut.Lab.Strategies;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Scenarios;

/// <summary>One cell of a scenario's table: a strategy, a workload and its size.</summary>
/// <param name="Strategy">How the items are fanned out.</param>
/// <param name="CreateWorkload">Makes a fresh workload (with its own probe) for a run of this case.</param>
/// <param name="ItemCount">N, the number of items.</param>
/// <param name="SeedSays">What the seed published for this cell, at the seed's own size, or null.</param>
public sealed record LabCase(Strategy Strategy, Func<Workload> CreateWorkload, int ItemCount, string? SeedSays = null);
