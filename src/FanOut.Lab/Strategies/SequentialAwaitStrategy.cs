using FanOut.Lab.Workloads;

namespace FanOut.Lab.Strategies;

/// <summary>The baseline with no concurrency: <c>foreach (var item in items) await body(item);</c></summary>
public sealed class SequentialAwaitStrategy : Strategy
{
    /// <inheritdoc/>
    public override string Name => "Sequential await";

    /// <inheritdoc/>
    public override WorkloadForms Needs => WorkloadForms.Asynchronous;

    /// <inheritdoc/>
    public override int ConcurrencyFor(int itemCount) => 1;

    /// <inheritdoc/>
    public override async Task RunAsync(Workload workload, int[] items, CancellationToken cancellationToken)
    {
        foreach (var item in items)
        {
            await workload.RunAsync(item, cancellationToken).ConfigureAwait(false);
        }
    }
}
