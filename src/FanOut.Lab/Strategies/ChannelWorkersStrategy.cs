using System.Threading.Channels;

using FanOut.Lab.Workloads;

namespace FanOut.Lab.Strategies;

/// <summary>The throttled pipeline seed 002 mentions: one producer fills a bounded channel, N worker loops read and run items.</summary>
/// <param name="workers">How many reader loops, which is the concurrency limit.</param>
public sealed class ChannelWorkersStrategy(int workers) : Strategy
{
    private readonly int _workers = CheckLimit(workers, nameof(workers));

    /// <inheritdoc/>
    public override string Name => $"Channel ({_workers} workers)";

    /// <inheritdoc/>
    public override WorkloadForms Needs => WorkloadForms.Asynchronous;

    /// <inheritdoc/>
    public override int ConcurrencyFor(int itemCount) => Math.Min(itemCount, _workers);

    /// <inheritdoc/>
    public override async Task RunAsync(Workload workload, int[] items, CancellationToken cancellationToken)
    {
        // Bounded to the worker count: the producer waits instead of buffering the whole source.
        var channel = Channel.CreateBounded<int>(new BoundedChannelOptions(_workers) { SingleWriter = true });
        var workerTasks = new Task[_workers];
        for (var w = 0; w < workerTasks.Length; w++)
        {
            workerTasks[w] = Task.Run(() => WorkAsync(workload, channel.Reader, cancellationToken), cancellationToken);
        }

        try
        {
            foreach (var item in items)
            {
                await channel.Writer.WriteAsync(item, cancellationToken).ConfigureAwait(false);
            }
        }
        finally
        {
            channel.Writer.Complete();
        }

        await Task.WhenAll(workerTasks).ConfigureAwait(false);
    }

    private static async Task WorkAsync(Workload workload, ChannelReader<int> reader, CancellationToken cancellationToken)
    {
        await foreach (var item in reader.ReadAllAsync(cancellationToken).ConfigureAwait(false))
        {
            await workload.RunAsync(item, cancellationToken).ConfigureAwait(false);
        }
    }
}
