using System.Threading.Channels;

using FanOut.Lab.Workloads;

namespace FanOut.Lab.Strategies;

/// <summary>Seed 002's "STC": every writer starts at once, does its item and writes its id to an unbounded channel; one reader drains it.</summary>
/// <remarks>Concurrency is unbounded, exactly like <see cref="WhenAllStrategy"/>; the channel only serialises the results.</remarks>
public sealed class ChannelAllWritersStrategy : Strategy
{
    /// <inheritdoc/>
    public override string Name => "Channel (all writers)";

    /// <inheritdoc/>
    public override WorkloadForms Needs => WorkloadForms.Asynchronous;

    /// <inheritdoc/>
    public override int ConcurrencyFor(int itemCount) => itemCount;

    /// <inheritdoc/>
    public override async Task RunAsync(Workload workload, int[] items, CancellationToken cancellationToken)
    {
        var channel = Channel.CreateUnbounded<int>(new UnboundedChannelOptions { SingleReader = true });
        var reader = DrainAsync(channel.Reader, cancellationToken);
        try
        {
            await Task.WhenAll(items.Select(item => WriteAsync(workload, item, channel.Writer, cancellationToken))).ConfigureAwait(false);
        }
        finally
        {
            channel.Writer.Complete();
        }

        await reader.ConfigureAwait(false);
    }

    private static async Task WriteAsync(Workload workload, int item, ChannelWriter<int> writer, CancellationToken cancellationToken)
    {
        await workload.RunAsync(item, cancellationToken).ConfigureAwait(false);
        await writer.WriteAsync(item, cancellationToken).ConfigureAwait(false);
    }

    private static async Task DrainAsync(ChannelReader<int> reader, CancellationToken cancellationToken)
    {
        while (await reader.WaitToReadAsync(cancellationToken).ConfigureAwait(false))
        {
            while (reader.TryRead(out _))
            {
            }
        }
    }
}
