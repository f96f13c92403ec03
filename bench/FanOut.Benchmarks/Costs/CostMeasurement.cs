using System.Globalization;
using System.Text;
using System.Threading.Channels;
using System.Threading.Tasks.Dataflow;

namespace FanOut.Benchmarks.Costs;

/// <summary>
/// <c>costs [rounds] [results-dir]</c>: issue 17's cost targets measured side by side in one process, FanOut against
/// Parallel.ForEachAsync and the best hand-written equivalents, in alternating rounds (see <see cref="AlternatingRounds"/>).
/// Writes <c>costs.md</c>: bytes per call at D in flight (item 9), asynchronous bodies (item 10), streams (item 11).
/// A fourth argument (<c>bytes</c>, <c>async</c> or <c>streams</c>) runs one section only, printed and not written.
/// </summary>
public static class CostMeasurement
{
    public const int DefaultRounds = 9;

    private static readonly CultureInfo s_inv = CultureInfo.InvariantCulture;

    public static async Task RunAsync(string resultsDir, int rounds, string? only = null)
    {
        var report = new StringBuilder();
        report.AppendLine("# Costs: FanOut beside Parallel.ForEachAsync and hand-written fan-outs, one process, alternating rounds");
        report.AppendLine();
        report.AppendLine(CultureInfo.InvariantCulture, $"Machine: {Environment.ProcessorCount} logical cores, {System.Runtime.InteropServices.RuntimeInformation.OSDescription}, .NET {Environment.Version}; load average at the start {HostLoad.OneMinute()}.");
        report.AppendLine(CultureInfo.InvariantCulture, $"Command: `dotnet run -c Release --project bench/FanOut.Benchmarks -- costs {rounds}`. Each cell is the median of {rounds} rounds after 2 warm-up rounds; every round runs every contender once, in an order that rotates by one each round. Bytes: `GC.GetTotalAllocatedBytes(precise: true)` around each call (all threads).");
        report.AppendLine();

        if (only is not null)
        {
            await (only switch
            {
                "bytes" => AllocationPerCallAsync(report, rounds),
                "async" => AsyncBodiesAsync(report, rounds),
                "streams" => StreamsAsync(report, rounds),
                _ => throw new ArgumentException($"costs: unknown section '{only}'; valid: bytes, async, streams"),
            });
            Console.WriteLine(report.ToString());
            return;
        }

        await AllocationPerCallAsync(report, rounds);
        await AsyncBodiesAsync(report, rounds);
        await StreamsAsync(report, rounds);

        Directory.CreateDirectory(resultsDir);
        var path = Path.Combine(resultsDir, "costs.md");
        await File.WriteAllTextAsync(path, report.ToString());
        Console.WriteLine(report.ToString());
        Console.WriteLine($"written: {path}");
    }

    /// <summary>Item 9: bytes per call with D in flight (2,000 short waits), array and lazy sources, and the default at 256.</summary>
    private static async Task AllocationPerCallAsync(StringBuilder report, int rounds)
    {
        report.AppendLine("## Bytes per call at D in flight (item 9)");
        report.AppendLine();
        report.AppendLine("2,000 items, each `await Task.Delay(1)`; FanOut at `FanOutAsync(D, body)` (Fixed(D)) against `Parallel.ForEachAsync` with `MaxDegreeOfParallelism = D`; the default row is FanOut with no options (adaptive) against Parallel.ForEachAsync at 256. Target: FanOut/PFEA bytes <= 1.2x.");
        report.AppendLine();
        report.AppendLine("| source | D | FanOut KiB/call | Parallel.ForEachAsync KiB/call | bytes ratio | FanOut ms | PFEA ms |");
        report.AppendLine("|---|---:|---:|---:|---:|---:|---:|");
        var items = Enumerable.Range(0, 2000).ToArray();
        static async ValueTask Wait(int _, CancellationToken ct) => await Task.Delay(1, ct);
        foreach (var lazy in new[] { false, true })
        {
            IEnumerable<int> Source() => lazy ? items.Select(x => x) : items;
            foreach (var d in new[] { 16, 256, 1024 })
            {
                var measured = await AlternatingRounds.RunAsync(
                [
                    new Contender("FanOut", () => Source().FanOutAsync(d, Wait)),
                    new Contender("PFEA", () => Parallel.ForEachAsync(Source(), new ParallelOptions { MaxDegreeOfParallelism = d }, Wait)),
                ], rounds);
                AppendBytesRow(report, lazy ? "lazy" : "array", d.ToString(s_inv), measured[0], measured[1]);
            }

            var defaults = await AlternatingRounds.RunAsync(
            [
                new Contender("FanOut default", () => Source().FanOutAsync(Wait)),
                new Contender("PFEA 256", () => Parallel.ForEachAsync(Source(), new ParallelOptions { MaxDegreeOfParallelism = 256 }, Wait)),
            ], rounds);
            AppendBytesRow(report, lazy ? "lazy" : "array", "default vs 256", defaults[0], defaults[1]);
        }

        report.AppendLine();
    }

    private static void AppendBytesRow(StringBuilder report, string source, string d, Measured fanOut, Measured pfea) =>
        report.AppendLine(CultureInfo.InvariantCulture,
            $"| {source} | {d} | {fanOut.MedianBytes / 1024:F1} | {pfea.MedianBytes / 1024:F1} | **{fanOut.MedianBytes / pfea.MedianBytes:F2}x** | {fanOut.MedianMilliseconds:F1} | {pfea.MedianMilliseconds:F1} |");

    /// <summary>Item 10: <c>await Task.Yield()</c> bodies, 200,000 items, Fixed(ProcessorCount), with and without results.</summary>
    private static async Task AsyncBodiesAsync(StringBuilder report, int rounds)
    {
        const int count = 200_000;
        var dop = Environment.ProcessorCount;
        var items = Enumerable.Range(0, count).ToArray();
        report.AppendLine("## Asynchronous bodies (item 10)");
        report.AppendLine();
        report.AppendLine(CultureInfo.InvariantCulture, $"{count:N0} items over an array, body `await Task.Yield()`, {dop} in flight (`FanOutAsync({dop}, body)`, `MaxDegreeOfParallelism = {dop}`). Target (issue 38): time <= 0.8x, bytes <= 1.0x of Parallel.ForEachAsync.");
        report.AppendLine();
        report.AppendLine("| FanOut vs Parallel.ForEachAsync | FanOut ns/item | PFEA ns/item | time ratio | FanOut B/item | PFEA B/item | bytes ratio | FanOut pool items/item | PFEA pool items/item |");
        report.AppendLine("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        var measured = await AlternatingRounds.RunAsync(
        [
            new Contender("PFEA", () => Parallel.ForEachAsync(items, new ParallelOptions { MaxDegreeOfParallelism = dop }, static async (_, _) => await Task.Yield())),
            new Contender("FanOut, no results", () => items.FanOutAsync(dop, static async (_, _) => await Task.Yield())),
            new Contender("FanOut, results", () => items.FanOutAsync(dop, static async (x, _) =>
            {
                await Task.Yield();
                return x;
            })),
            new Contender("PFEA storing results", () =>
            {
                // The array is part of the call, as FanOut's results are: the same work, written by hand.
                var results = new int[count];
                return Parallel.ForEachAsync(items, new ParallelOptions { MaxDegreeOfParallelism = dop }, async (x, _) =>
                {
                    await Task.Yield();
                    results[x] = x;
                });
            }),
            new Contender("least loop", () => HandWrittenFanOuts.LeastLoop(items, dop, static async _ => await Task.Yield())),
        ], rounds);
        var pfea = measured[0];
        var storing = measured[3];
        AppendAsyncRow(report, measured[1], pfea, count);
        AppendAsyncRow(report, measured[2], storing, count);
        AppendAsyncRow(report, measured[4], pfea, count);
        AppendAsyncRow(report, measured[1], measured[4], count);
        report.AppendLine();
        report.AppendLine("The least loop is the floor of any fan-out of these bodies: N tasks that take the next index with one Interlocked.Increment and await the body, with no cancellation, no error handling, no limit and no results (written out below). A fan-out cannot cost less than it per item; its row says how far below Parallel.ForEachAsync the floor lies on this machine.");
        report.AppendLine();
        report.AppendLine("The results row is compared with Parallel.ForEachAsync storing each result into an array it allocates in the same call (its body's state machine is 8 bytes larger for a result, as FanOut's is), so both sides do the same work.");
        report.AppendLine();

        // Item 2's cost bound: a synchronous body over an array, claimed one index at a time in order.
        const int syncCount = 1_000_000;
        var syncItems = Enumerable.Range(0, syncCount).ToArray();
        var sync = await AlternatingRounds.RunAsync(
        [
            new Contender("PFEA", () => Parallel.ForEachAsync(syncItems, new ParallelOptions { MaxDegreeOfParallelism = dop }, static (_, _) => ValueTask.CompletedTask)),
            new Contender("FanOut, no results", () => syncItems.FanOutAsync(dop, static (_, _) => ValueTask.CompletedTask)),
        ], rounds);
        report.AppendLine(CultureInfo.InvariantCulture, $"Synchronous body (`ValueTask.CompletedTask`), {syncCount:N0} items over an array, {dop} in flight (item 2's bound: <= 0.2x of Parallel.ForEachAsync per item):");
        report.AppendLine();
        report.AppendLine("| FanOut vs Parallel.ForEachAsync | FanOut ns/item | PFEA ns/item | time ratio | FanOut B/item | PFEA B/item | bytes ratio | FanOut pool items/item | PFEA pool items/item |");
        report.AppendLine("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        AppendAsyncRow(report, sync[1], sync[0], syncCount);
        report.AppendLine();
        report.AppendLine(CultureInfo.InvariantCulture, $"Thread pool after this section: {ThreadPool.ThreadCount} threads, {ThreadPool.PendingWorkItemCount} work items pending; load average {HostLoad.OneMinute()}.");
        report.AppendLine();
    }

    private static void AppendAsyncRow(StringBuilder report, Measured fanOut, Measured pfea, int count) =>
        report.AppendLine(CultureInfo.InvariantCulture,
            $"| {fanOut.Name} vs {pfea.Name} | {fanOut.MedianMilliseconds * 1e6 / count:F0} | {pfea.MedianMilliseconds * 1e6 / count:F0} | **{fanOut.MedianMilliseconds / pfea.MedianMilliseconds:F2}x** | {fanOut.MedianBytes / count:F0} | {pfea.MedianBytes / count:F0} | **{fanOut.MedianBytes / pfea.MedianBytes:F2}x** | {fanOut.MedianWorkItems / count:F3} | {pfea.MedianWorkItems / count:F3} |");

    /// <summary>Item 11: FanOutStream per result against a bounded Channel fed by N workers and Dataflow's TransformBlock.</summary>
    private static async Task StreamsAsync(StringBuilder report, int rounds)
    {
        const int count = 100_000;
        var dop = Environment.ProcessorCount;
        var items = Enumerable.Range(0, count).ToArray();
        report.AppendLine("## Streams (item 11)");
        report.AppendLine();
        report.AppendLine(CultureInfo.InvariantCulture, $"{count:N0} items, {dop} in flight, the consumer sums the results. Hand-written: a bounded Channel (capacity 1,024) that {dop} workers fill from a shared index (completion order), and Dataflow's TransformBlock (MaxDegreeOfParallelism {dop}, BoundedCapacity 1,024; EnsureOrdered for source order). Target: FanOutStream per result at or below the best hand-written one.");
        report.AppendLine();
        report.AppendLine("| body | order | FanOutStream ns/result | Channel + N workers ns/result | TransformBlock ns/result | FanOut vs best |");
        report.AppendLine("|---|---|---:|---:|---:|---:|");
        foreach (var yielding in new[] { false, true })
        {
            Func<int, CancellationToken, ValueTask<int>> body = yielding
                ? static async (x, _) =>
                {
                    await Task.Yield();
                    return x;
                }
            : static (x, _) => new ValueTask<int>(x);
            foreach (var ordered in new[] { false, true })
            {
                var contenders = new List<Contender>
                {
                    new("FanOutStream", async () => Consume(await Sum(items.FanOutStream(body, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(dop), Ordered = ordered })))),
                    new("TransformBlock", async () => Consume(await TransformBlockSum(items, dop, ordered, body))),
                };
                if (!ordered)
                {
                    contenders.Insert(1, new("Channel", async () => Consume(await ChannelSum(items, dop, body))));
                }

                var measured = await AlternatingRounds.RunAsync(contenders, rounds);
                var fanOut = measured[0];
                var channel = ordered ? null : measured[1];
                var block = measured[^1];
                var best = Math.Min(channel?.MedianMilliseconds ?? double.MaxValue, block.MedianMilliseconds);
                report.AppendLine(CultureInfo.InvariantCulture,
                    $"| {(yielding ? "await Task.Yield()" : "synchronous")} | {(ordered ? "source" : "completion")} | {PerResult(fanOut)} | {(channel is null ? "-" : PerResult(channel))} | {PerResult(block)} | **{fanOut.MedianMilliseconds / best:F2}x** |");
            }
        }

        report.AppendLine();

        static string PerResult(Measured m) => (m.MedianMilliseconds * 1e6 / count).ToString("F0", s_inv);
    }

    private static long s_sink;

    private static void Consume(long sum) => Interlocked.Add(ref s_sink, sum);

    private static async Task<long> Sum(IAsyncEnumerable<int> results)
    {
        long sum = 0;
        await foreach (var r in results)
        {
            sum += r;
        }

        return sum;
    }

    private static async Task<long> ChannelSum(int[] items, int dop, Func<int, CancellationToken, ValueTask<int>> body)
    {
        var channel = Channel.CreateBounded<int>(new BoundedChannelOptions(1024) { SingleReader = true });
        var next = -1;
        var workers = new Task[dop];
        for (var w = 0; w < dop; w++)
        {
            workers[w] = Task.Run(async () =>
            {
                int i;
                while ((i = Interlocked.Increment(ref next)) < items.Length)
                {
                    await channel.Writer.WriteAsync(await body(items[i], default));
                }
            });
        }

        _ = Task.WhenAll(workers).ContinueWith(t => channel.Writer.Complete(t.Exception), TaskScheduler.Default);
        long sum = 0;
        await foreach (var r in channel.Reader.ReadAllAsync())
        {
            sum += r;
        }

        return sum;
    }

    private static async Task<long> TransformBlockSum(int[] items, int dop, bool ordered, Func<int, CancellationToken, ValueTask<int>> body)
    {
        var block = new TransformBlock<int, int>(
            x => body(x, default).AsTask(),
            new ExecutionDataflowBlockOptions { MaxDegreeOfParallelism = dop, BoundedCapacity = 1024, EnsureOrdered = ordered, SingleProducerConstrained = true });
        var feed = Task.Run(async () =>
        {
            foreach (var x in items)
            {
                await block.SendAsync(x);
            }

            block.Complete();
        });
        long sum = 0;
        while (await block.OutputAvailableAsync())
        {
            while (block.TryReceive(out var r))
            {
                sum += r;
            }
        }

        await feed;
        await block.Completion;
        return sum;
    }
}
