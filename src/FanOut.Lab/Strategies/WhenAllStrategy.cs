using FanOut.Lab.Workloads;

namespace FanOut.Lab.Strategies;

/// <summary><c>Task.WhenAll(items.Select(body))</c>: every item starts at once, on the caller's thread, until it first yields.</summary>
/// <remarks>A body that never yields (CPU work, <c>Task.Delay(0)</c>) runs to completion inside the
/// projection, one item after another: seed 001's CPU "WhenAll" and seed 004's finding.</remarks>
public sealed class WhenAllStrategy : Strategy
{
    /// <inheritdoc/>
    public override string Name => "Task.WhenAll";

    /// <inheritdoc/>
    public override WorkloadForms Needs => WorkloadForms.Asynchronous;

    /// <inheritdoc/>
    public override int ConcurrencyFor(int itemCount) => itemCount;

    /// <inheritdoc/>
    public override Task RunAsync(Workload workload, int[] items, CancellationToken cancellationToken) =>
        Task.WhenAll(items.Select(item => workload.RunAsync(item, cancellationToken).AsTask()));
}
