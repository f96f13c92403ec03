using System.Diagnostics;
using System.Globalization;
using System.Runtime.InteropServices;
using System.Text;

namespace FanOut.Benchmarks.Adaptive;

/// <summary>
/// Issue 8's targets for the adaptive default, side by side in one process: every shape runs each of its contenders once
/// per round, rounds alternate, and the table shows medians and the ratios the targets are stated in. FanOut's default is
/// <c>FanOutAsync(body)</c> with no options (a fresh adaptive limit per call).
/// </summary>
public static class FastStartMeasurement
{
    /// <summary>Rounds when none are asked for: medians of 5.</summary>
    public const int DefaultRounds = 5;

    private const string Default = "FanOut default";
    private const string Parallel = "Parallel.ForEachAsync default";

    private static readonly int s_maxLimit = new AdaptiveLimitOptions().MaxLimit;

    public static async Task RunAsync(string resultsDirectory, int rounds)
    {
        var shapes = Shapes();
        var times = shapes.ToDictionary(s => s.Name, s => s.Contenders.ToDictionary(c => c.Name, _ => new List<double>()));
        var peaks = shapes.ToDictionary(s => s.Name, _ => new List<int>());
        for (var round = 1; round <= rounds; round++)
        {
            foreach (var shape in shapes)
            {
                foreach (var contender in shape.Contenders)
                {
                    var sw = Stopwatch.StartNew();
                    var peak = await contender.Run();
                    times[shape.Name][contender.Name].Add(sw.Elapsed.TotalMilliseconds);
                    if (contender.Name == Default)
                    {
                        peaks[shape.Name].Add(peak);
                    }
                }
            }

            Console.Error.WriteLine($"round {round}/{rounds} done");
        }

        var report = new StringBuilder();
        report.AppendLine("# Adaptive default: fast start, measured on this machine");
        report.AppendLine();
        report.AppendLine(CultureInfo.InvariantCulture, $"Machine: {Environment.ProcessorCount} logical cores, {RuntimeInformation.OSDescription}, {RuntimeInformation.FrameworkDescription}; load average at the start {HostLoad.OneMinute()}. Command: `dotnet run -c Release --project bench/FanOut.Benchmarks -- fast-start {rounds}`. Each cell is the median of {rounds} rounds; rounds alternate the contenders in one process. \"vs best bounded\" is FanOut's default against Fixed({s_maxLimit}) (its MaxLimit; Task.WhenAll for N <= {s_maxLimit}); CPU rows against Fixed(ProcessorCount); queueing rows against Fixed(C).");
        report.AppendLine();
        report.AppendLine("| shape | FanOut default ms (peak limit) | best bounded | best bounded ms | Parallel.ForEachAsync default ms | default vs Parallel.ForEachAsync | Task.WhenAll ms | default vs best bounded | target |");
        report.AppendLine("|---|---:|---|---:|---:|---:|---:|---:|---|");
        foreach (var shape in shapes)
        {
            var medians = times[shape.Name].ToDictionary(kv => kv.Key, kv => Median(kv.Value));
            var best = medians[shape.Best];
            var fanOut = medians[Default];
            var parallel = medians.TryGetValue(Parallel, out var p) ? (FormattableString)$"{p:F0} | {fanOut / p:F2}x" : $"- | -";
            var whenAll = medians.TryGetValue("Task.WhenAll", out var w) ? $"{w:F0}" : "-";
            var peak = peaks[shape.Name].Order().ElementAt(peaks[shape.Name].Count / 2);
            report.AppendLine(CultureInfo.InvariantCulture, $"| {shape.Name} | {fanOut:F0} ({peak}) | {shape.Best} | {best:F0} | {parallel.ToString(CultureInfo.InvariantCulture)} | {whenAll} | **{fanOut / best:F2}x** | {shape.Target} |");
        }

        report.AppendLine();
        Directory.CreateDirectory(resultsDirectory);
        var path = Path.Combine(resultsDirectory, "adaptive-fast-start.md");
        await File.WriteAllTextAsync(path, report.ToString());
        Console.WriteLine(report);
        Console.WriteLine($"Wrote {path}");
    }

    private static List<Shape> Shapes()
    {
        var shapes = new List<Shape>();
        foreach (var (count, ms) in new[] { (10, 100), (100, 100), (500, 20), (5, 500), (2000, 5) })
        {
            var delays = Enumerable.Repeat(ms, count).ToArray();
            shapes.Add(WaitShape($"{count} x {ms} ms", delays));
        }

        var random = new Random(2);
        shapes.Add(WaitShape("100 x 10-50 ms", [.. Enumerable.Range(0, 100).Select(_ => random.Next(10, 51))]));

        const int cpuItems = 400;
        var cores = Environment.ProcessorCount;
        var items = Enumerable.Range(0, cpuItems).ToArray();
        shapes.Add(new Shape($"CPU: {cpuItems} x 2 ms synchronous spin", $"Fixed({cores})", "<= 1.15x",
        [
            new(Default, async () => { var limit = ConcurrencyLimit.Adaptive(); await items.FanOutAsync(SpinBody, new FanOutOptions { Limit = limit }); return limit.Peak; }),
            new($"Fixed({cores})", async () => { await items.FanOutAsync(SpinBody, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(cores) }); return cores; }),
            new(Parallel, async () => { await System.Threading.Tasks.Parallel.ForEachAsync(items, (i, _) => { Spin(i); return ValueTask.CompletedTask; }); return cores; }),
        ]));

        const int capacity = 16;
        const int queueItems = 2000;
        var queueSource = Enumerable.Range(0, queueItems).ToArray();
        shapes.Add(new Shape($"queueing downstream C = {capacity}, 10 ms, {queueItems} items", $"Fixed({capacity})", ">= 0.9x throughput (<= 1.11x time)",
        [
            new(Default, async () =>
            {
                using var downstream = new SimulatedDownstream(capacity, TimeSpan.FromMilliseconds(10));
                var limit = ConcurrencyLimit.Adaptive();
                await queueSource.FanOutAsync(downstream.CallAsync, new FanOutOptions { Limit = limit });
                return limit.Peak;
            }),
            new($"Fixed({capacity})", async () =>
            {
                using var downstream = new SimulatedDownstream(capacity, TimeSpan.FromMilliseconds(10));
                await queueSource.FanOutAsync(downstream.CallAsync, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(capacity) });
                return capacity;
            }),
        ]));
        return shapes;
    }

    /// <summary>Pure waits: FanOut's default (no options), Fixed(MaxLimit), Parallel.ForEachAsync's default and Task.WhenAll.</summary>
    private static Shape WaitShape(string name, int[] delays)
    {
        var items = Enumerable.Range(0, delays.Length).ToArray();
        return new Shape(name, $"Fixed({s_maxLimit})", "<= 2x, and <= 1x of Parallel.ForEachAsync",
        [
            new(Default, async () =>
            {
                var limit = ConcurrencyLimit.Adaptive();
                await items.FanOutAsync(async (i, ct) => { await Task.Delay(delays[i], ct); return i; }, new FanOutOptions { Limit = limit });
                return limit.Peak;
            }),
            new($"Fixed({s_maxLimit})", async () =>
            {
                await items.FanOutAsync(async (i, ct) => { await Task.Delay(delays[i], ct); return i; }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(s_maxLimit) });
                return s_maxLimit;
            }),
            new(Parallel, async () =>
            {
                await System.Threading.Tasks.Parallel.ForEachAsync(items, async (i, ct) => await Task.Delay(delays[i], ct));
                return Environment.ProcessorCount;
            }),
            new("Task.WhenAll", async () =>
            {
                await Task.WhenAll(items.Select(async i => { await Task.Delay(delays[i]); return i; }));
                return items.Length;
            }),
        ]);
    }

    private static ValueTask<int> SpinBody(int item, CancellationToken cancellationToken) => new(Spin(item));

    /// <summary>About 2 ms of CPU, synchronously.</summary>
    private static int Spin(int item)
    {
        var until = Stopwatch.GetTimestamp() + (Stopwatch.Frequency / 500);
        var x = item;
        while (Stopwatch.GetTimestamp() < until)
        {
            x = (x * 31) + 7;
        }

        return x;
    }

    private static double Median(List<double> values)
    {
        var sorted = values.Order().ToArray();
        return sorted[sorted.Length / 2];
    }

    /// <summary>One workload and the contenders that run it; <paramref name="Best"/> names the contender the target is stated against.</summary>
    private sealed record Shape(string Name, string Best, string Target, IReadOnlyList<Contender> Contenders);

    /// <summary>One way to run a shape; returns the peak limit it used.</summary>
    private sealed record Contender(string Name, Func<Task<int>> Run);
}
