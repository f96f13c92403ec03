using FanOut.Lab.Workloads;

namespace FanOut.Lab.Strategies;

/// <summary>A plain <c>foreach</c> calling a synchronous body on the caller's thread (seed 003's "Sync").</summary>
public sealed class SynchronousLoopStrategy : Strategy
{
    /// <inheritdoc/>
    public override string Name => "Synchronous loop";

    /// <inheritdoc/>
    public override WorkloadForms Needs => WorkloadForms.Synchronous;

    /// <inheritdoc/>
    public override int ConcurrencyFor(int itemCount) => 1;

    /// <inheritdoc/>
    public override Task RunAsync(Workload workload, int[] items, CancellationToken cancellationToken)
    {
        foreach (var item in items)
        {
            cancellationToken.ThrowIfCancellationRequested();
            workload.Run(item);
        }

        return Task.CompletedTask;
    }
}
