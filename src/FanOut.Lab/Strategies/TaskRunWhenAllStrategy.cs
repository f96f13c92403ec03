using FanOut.Lab.Workloads;

namespace FanOut.Lab.Strategies;

/// <summary><c>Task.WhenAll(items.Select(i => Task.Run(() => body(i))))</c>: every item queued to the thread pool at once (seed 004).</summary>
public sealed class TaskRunWhenAllStrategy : Strategy
{
    /// <inheritdoc/>
    public override string Name => "Task.Run + WhenAll";

    /// <inheritdoc/>
    public override WorkloadForms Needs => WorkloadForms.Asynchronous;

    /// <inheritdoc/>
    public override int ConcurrencyFor(int itemCount) => itemCount;

    /// <inheritdoc/>
    public override Task RunAsync(Workload workload, int[] items, CancellationToken cancellationToken) =>
        Task.WhenAll(items.Select(item => Task.Run(() => workload.RunAsync(item, cancellationToken).AsTask(), cancellationToken)));
}
