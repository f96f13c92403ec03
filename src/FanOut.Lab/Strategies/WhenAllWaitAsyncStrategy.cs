using FanOut.Lab.Workloads;

namespace FanOut.Lab.Strategies;

/// <summary><c>await Task.WhenAll(tasks).WaitAsync(token)</c>: the caller stops waiting when cancelled, whether or not the tasks stopped.</summary>
/// <remarks>The usual fix for "WhenAll does not cancel": it returns at once, and leaves every task that ignores the token running.</remarks>
public sealed class WhenAllWaitAsyncStrategy : Strategy
{
    /// <inheritdoc/>
    public override string Name => "Task.WhenAll + WaitAsync(token)";

    /// <inheritdoc/>
    public override WorkloadForms Needs => WorkloadForms.Asynchronous;

    /// <inheritdoc/>
    public override int ConcurrencyFor(int itemCount) => itemCount;

    /// <inheritdoc/>
    public override Task RunAsync(Workload workload, int[] items, CancellationToken cancellationToken) =>
        Task.WhenAll(items.Select(item => workload.RunAsync(item, cancellationToken).AsTask())).WaitAsync(cancellationToken);
}
