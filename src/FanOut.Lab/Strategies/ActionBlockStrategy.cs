using System.Threading.Tasks.Dataflow;

using FanOut.Lab.Workloads;

namespace FanOut.Lab.Strategies;

/// <summary>TPL Dataflow: post every item to an <see cref="ActionBlock{TInput}"/> with MaxDegreeOfParallelism, then await its completion.</summary>
/// <param name="maxDegreeOfParallelism">The block's cap.</param>
public sealed class ActionBlockStrategy(int maxDegreeOfParallelism) : Strategy
{
    private readonly int _dop = CheckLimit(maxDegreeOfParallelism, nameof(maxDegreeOfParallelism));

    /// <inheritdoc/>
    public override string Name => $"ActionBlock (DOP {_dop})";

    /// <inheritdoc/>
    public override WorkloadForms Needs => WorkloadForms.Asynchronous;

    /// <inheritdoc/>
    public override int ConcurrencyFor(int itemCount) => Math.Min(itemCount, _dop);

    /// <inheritdoc/>
    public override async Task RunAsync(Workload workload, int[] items, CancellationToken cancellationToken)
    {
        var block = new ActionBlock<int>(
            item => workload.RunAsync(item, cancellationToken).AsTask(),
            new ExecutionDataflowBlockOptions { MaxDegreeOfParallelism = _dop, CancellationToken = cancellationToken });
        foreach (var item in items)
        {
            // Unbounded input buffer: Post never declines, so every item is accepted.
            block.Post(item);
        }

        block.Complete();
        await block.Completion.ConfigureAwait(false);
    }
}
