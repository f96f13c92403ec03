using FanOut.Lab.Workloads;

namespace FanOut.Lab.Strategies;

/// <summary>Starts every item as a <see cref="ValueTask"/> and awaits them in order, with no <see cref="Task"/> per item (seed 003's ValueTask).</summary>
/// <remarks>Concurrency is the same as <see cref="WhenAllStrategy"/>; what differs is the allocation column:
/// an item that completes synchronously costs no Task at all.</remarks>
public sealed class ValueTaskProjectionStrategy : Strategy
{
    /// <inheritdoc/>
    public override string Name => "ValueTask projection";

    /// <inheritdoc/>
    public override WorkloadForms Needs => WorkloadForms.Asynchronous;

    /// <inheritdoc/>
    public override int ConcurrencyFor(int itemCount) => itemCount;

    /// <inheritdoc/>
    public override async Task RunAsync(Workload workload, int[] items, CancellationToken cancellationToken)
    {
        var pending = new ValueTask[items.Length];
        for (var i = 0; i < items.Length; i++)
        {
            pending[i] = workload.RunAsync(items[i], cancellationToken);
        }

        // Each ValueTask is awaited exactly once, as its contract requires.
        foreach (var task in pending)
        {
            await task.ConfigureAwait(false);
        }
    }
}
