using System.Threading.Channels;

namespace FanOut.Benchmarks;

/// <summary>
/// The hand-written fan-outs the benchmarks compare FanOut with, written once: a SemaphoreSlim gate over one task per item,
/// and a bounded Channel drained by N workers. The body is a delegate, so every benchmark class passes its own.
/// </summary>
public static class HandWrittenFanOuts
{
    /// <summary>The Channel's capacity: enough that the writer rarely waits, bounded as a real pipeline would be.</summary>
    private const int ChannelCapacity = 1024;

    /// <summary>
    /// The least fan-out of asynchronous bodies, the floor under every other: <paramref name="dop"/> tasks that claim indexes
    /// with one interlocked increment each and await the body (no cancellation, no error handling, no limit, no results).
    /// </summary>
    public static Task LeastLoop(int[] items, int dop, Func<int, ValueTask> body)
    {
        var next = -1;
        var workers = new Task[dop];
        for (var w = 0; w < dop; w++)
        {
            workers[w] = Task.Run(async () =>
            {
                int i;
                while ((i = Interlocked.Increment(ref next)) < items.Length)
                {
                    await body(items[i]).ConfigureAwait(false);
                }
            });
        }

        return Task.WhenAll(workers);
    }

    /// <summary>One task per item, each waiting at a <see cref="SemaphoreSlim"/> of <paramref name="dop"/>, then Task.WhenAll.</summary>
    public static async Task SemaphoreSlimWhenAll(int[] items, int dop, Func<int, ValueTask> body)
    {
        using var gate = new SemaphoreSlim(dop);
        var tasks = new Task[items.Length];
        for (var i = 0; i < items.Length; i++)
        {
            tasks[i] = RunGated(gate, items[i], body);
        }

        await Task.WhenAll(tasks);

        static async Task RunGated(SemaphoreSlim semaphore, int item, Func<int, ValueTask> body)
        {
            await semaphore.WaitAsync();
            try
            {
                await body(item);
            }
            finally
            {
                semaphore.Release();
            }
        }
    }

    /// <summary>A bounded Channel the caller writes every item to, drained by <paramref name="dop"/> workers.</summary>
    public static async Task ChannelWorkers(int[] items, int dop, Func<int, ValueTask> body)
    {
        var channel = Channel.CreateBounded<int>(new BoundedChannelOptions(ChannelCapacity) { SingleWriter = true });
        var workers = new Task[dop];
        for (var w = 0; w < workers.Length; w++)
        {
            workers[w] = Task.Run(async () =>
            {
                await foreach (var item in channel.Reader.ReadAllAsync())
                {
                    await body(item);
                }
            });
        }

        foreach (var item in items)
        {
            await channel.Writer.WriteAsync(item);
        }

        channel.Writer.Complete();
        await Task.WhenAll(workers);
    }
}
