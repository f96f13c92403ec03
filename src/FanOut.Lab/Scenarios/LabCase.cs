using FanOut.Lab.Running;
using FanOut.Lab.Strategies;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Scenarios;

/// <summary>One cell of a scenario's table: a strategy, a workload and its size.</summary>
/// <param name="Strategy">How the items are fanned out.</param>
/// <param name="CreateWorkload">Makes a fresh workload (with its own probe) for a run of this case.</param>
/// <param name="ItemCount">N, the number of items.</param>
/// <param name="SeedSays">What the seed published for this cell, at the seed's own size, or null.</param>
/// <param name="Policy">A run policy of the case's own, when the runner's would take too long (a case of many seconds per run);
/// the runner then uses the tighter of the two (see <see cref="RunPolicy.Tighter"/>). Null: the runner's policy.</param>
public sealed record LabCase(Strategy Strategy, Func<Workload> CreateWorkload, int ItemCount, string? SeedSays = null, RunPolicy? Policy = null);
