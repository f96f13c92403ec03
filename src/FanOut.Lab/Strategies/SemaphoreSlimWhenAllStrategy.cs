using FanOut.Lab.Workloads;

namespace FanOut.Lab.Strategies;

/// <summary>The hand-written gate: every item becomes a task that waits on a <see cref="SemaphoreSlim"/>, then <c>Task.WhenAll</c>.</summary>
/// <param name="limit">The gate's size.</param>
public sealed class SemaphoreSlimWhenAllStrategy(int limit) : Strategy
{
    private readonly int _limit = CheckLimit(limit, nameof(limit));

    /// <inheritdoc/>
    public override string Name => $"SemaphoreSlim({_limit}) + WhenAll";

    /// <inheritdoc/>
    public override WorkloadForms Needs => WorkloadForms.Asynchronous;

    /// <inheritdoc/>
    public override int ConcurrencyFor(int itemCount) => Math.Min(itemCount, _limit);

    /// <inheritdoc/>
    public override async Task RunAsync(Workload workload, int[] items, CancellationToken cancellationToken)
    {
        using var gate = new SemaphoreSlim(_limit, _limit);
        await Task.WhenAll(items.Select(async item =>
        {
            await gate.WaitAsync(cancellationToken).ConfigureAwait(false);
            try
            {
                await workload.RunAsync(item, cancellationToken).ConfigureAwait(false);
            }
            finally
            {
                gate.Release();
            }
        })).ConfigureAwait(false);
    }
}
