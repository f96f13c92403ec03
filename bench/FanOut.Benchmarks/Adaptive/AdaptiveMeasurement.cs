using System.Diagnostics;
using System.Globalization;
using System.Text;

namespace FanOut.Benchmarks.Adaptive;

/// <summary>
/// Measures the adaptive limit on this machine, side by side with fixed limits in one run: total time against the best
/// fixed limit on a simulated downstream, against Fixed(ProcessorCount) on CPU-bound bodies, and the climb on pure
/// Task.Delay I/O. Writes a markdown table and an SVG chart of the limit over time.
/// </summary>
public static class AdaptiveMeasurement
{
    private const int DownstreamCapacity = 16;
    private static readonly TimeSpan s_serviceTime = TimeSpan.FromMilliseconds(10);

    public static async Task RunAsync(string resultsDirectory, string svgPath)
    {
        var report = new StringBuilder();
        var cores = Environment.ProcessorCount;
        report.AppendLine("# Adaptive limit: measured on this machine");
        report.AppendLine();
        report.AppendLine(CultureInfo.InvariantCulture, $"Machine: {cores} logical cores, {System.Runtime.InteropServices.RuntimeInformation.OSDescription}, {System.Runtime.InteropServices.RuntimeInformation.FrameworkDescription}. Wall-clock times of single runs (median of 3).");
        report.AppendLine();

        // 1. Simulated downstreams of capacity C, steady and lognormal service times: adaptive vs fixed limits.
        await DownstreamSectionAsync(report, DownstreamCapacity, logNormal: false, items: 3000, trace: null);
        var trace = new List<(double Ms, int Limit)>();
        var chartedMs = await DownstreamSectionAsync(report, DownstreamCapacity, logNormal: true, items: 3000, trace);
        await DownstreamSectionAsync(report, 64, logNormal: true, items: 8000, trace: null);

        // 2. CPU-bound bodies: adaptive vs Fixed(ProcessorCount).
        const int cpuItems = 600;
        var cpuFixed = await MedianAsync(() => CpuRunAsync(ConcurrencyLimit.Fixed(cores), cpuItems));
        var cpuLimit = ConcurrencyLimit.Adaptive();
        var cpuAdaptive = await CpuRunAsync(cpuLimit, cpuItems);
        var cpuAdaptiveMedian = await MedianAsync(() => CpuRunAsync(ConcurrencyLimit.Adaptive(), cpuItems), cpuAdaptive);
        report.AppendLine(CultureInfo.InvariantCulture, $"## CPU-bound bodies ({cpuItems} items of ~2 ms spinning after an `await Task.Yield()`)");
        report.AppendLine();
        report.AppendLine("| limit | total ms | final / peak limit | vs Fixed(ProcessorCount) |");
        report.AppendLine("|---|---:|---:|---:|");
        report.AppendLine(CultureInfo.InvariantCulture, $"| Fixed({cores}) | {cpuFixed:F0} | {cores} | 1.00x |");
        report.AppendLine(CultureInfo.InvariantCulture, $"| **Adaptive** | {cpuAdaptiveMedian:F0} | {cpuLimit.Current} / {cpuLimit.Peak} | **{cpuAdaptiveMedian / cpuFixed:F2}x** |");
        report.AppendLine();

        // 3. Pure Task.Delay I/O: the limit climbs to its maximum.
        var ioLimit = ConcurrencyLimit.Adaptive();
        var sw = Stopwatch.StartNew();
        await Enumerable.Range(0, 5000).FanOutAsync(async (i, ct) => { await Task.Delay(10, ct); return i; }, new FanOutOptions { Limit = ioLimit });
        report.AppendLine("## Pure `Task.Delay(10)` I/O, 5000 items");
        report.AppendLine();
        report.AppendLine(CultureInfo.InvariantCulture, $"Adaptive limit: final {ioLimit.Current}, peak {ioLimit.Peak} (maximum {new AdaptiveLimitOptions().MaxLimit}); total {sw.ElapsedMilliseconds} ms.");
        report.AppendLine();

        Directory.CreateDirectory(resultsDirectory);
        var reportPath = Path.Combine(resultsDirectory, "adaptive.md");
        await File.WriteAllTextAsync(reportPath, report.ToString());
        Directory.CreateDirectory(Path.GetDirectoryName(Path.GetFullPath(svgPath))!);
        await File.WriteAllTextAsync(svgPath, SvgChart.Render(trace, DownstreamCapacity, chartedMs, "lognormal service, p99 = 4x median"));
        Console.WriteLine(report);
        Console.WriteLine($"Wrote {reportPath} and {svgPath}");
    }

    /// <summary>One table: fixed limits C/2..4C and the adaptive limit (the first of its three runs traced); returns that run's time.</summary>
    private static async Task<double> DownstreamSectionAsync(StringBuilder report, int capacity, bool logNormal, int items, List<(double Ms, int Limit)>? trace)
    {
        var service = logNormal ? $"lognormal service, median {s_serviceTime.TotalMilliseconds} ms, p99 = 4x median" : $"service {s_serviceTime.TotalMilliseconds} ms";
        report.AppendLine(CultureInfo.InvariantCulture, $"## Downstream with hidden capacity C = {capacity} ({service}, FIFO queue beyond C), {items} items");
        report.AppendLine();
        report.AppendLine("| limit | total ms | settled limit (last 30% of the run) | vs best fixed |");
        report.AppendLine("|---|---:|---:|---:|");
        var fixedTimes = new List<(string Name, double Ms)>();
        foreach (var k in new[] { capacity / 2, capacity, capacity * 2, capacity * 4 })
        {
            var ms = await MedianAsync(() => DownstreamRunAsync(ConcurrencyLimit.Fixed(k), capacity, logNormal, items, trace: null));
            fixedTimes.Add(($"Fixed({k})", ms));
        }

        trace ??= [];
        var adaptive = ConcurrencyLimit.Adaptive();
        var adaptiveMs = await DownstreamRunAsync(adaptive, capacity, logNormal, items, trace);
        var adaptiveMedian = await MedianAsync(() => DownstreamRunAsync(ConcurrencyLimit.Adaptive(), capacity, logNormal, items, trace: null), adaptiveMs);
        var best = fixedTimes.Min(f => f.Ms);
        foreach (var (name, ms) in fixedTimes)
        {
            report.AppendLine(CultureInfo.InvariantCulture, $"| {name} | {ms:F0} | - | {ms / best:F2}x |");
        }

        var tail = trace.Skip((int)(trace.Count * 0.7)).Select(t => t.Limit).Order().ToArray();
        var median = tail[tail.Length / 2];
        report.AppendLine(CultureInfo.InvariantCulture, $"| **Adaptive** | {adaptiveMedian:F0} | {tail[0]}..{tail[^1]}, median {median} (= {tail[0] / (double)capacity:F2}C..{tail[^1] / (double)capacity:F2}C, median {median / (double)capacity:F2}C); final {adaptive.Current}, peak {adaptive.Peak} | **{adaptiveMedian / best:F2}x** |");
        report.AppendLine();
        return adaptiveMs;
    }

    private static async Task<double> DownstreamRunAsync(ConcurrencyLimit limit, int capacity, bool logNormal, int items, List<(double Ms, int Limit)>? trace)
    {
        using var downstream = new SimulatedDownstream(capacity, s_serviceTime, logNormal);
        var sw = Stopwatch.StartNew();
        using var sampling = new CancellationTokenSource();
        var sampler = trace is null ? Task.CompletedTask : Task.Run(async () =>
        {
            while (!sampling.IsCancellationRequested)
            {
                trace.Add((sw.Elapsed.TotalMilliseconds, limit.Current));
                await Task.Delay(5).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            }
        });
        await Enumerable.Range(0, items).FanOutAsync(downstream.CallAsync, new FanOutOptions { Limit = limit });
        var elapsed = sw.Elapsed.TotalMilliseconds;
        await sampling.CancelAsync();
        await sampler;
        return elapsed;
    }

    private static async Task<double> CpuRunAsync(ConcurrencyLimit limit, int items)
    {
        var sw = Stopwatch.StartNew();
        await Enumerable.Range(0, items).FanOutAsync(async (i, ct) =>
        {
            await Task.Yield();
            var until = Stopwatch.GetTimestamp() + (Stopwatch.Frequency / 500); // ~2 ms of CPU
            var x = i;
            while (Stopwatch.GetTimestamp() < until)
            {
                x = (x * 31) + 7;
            }

            return x;
        }, new FanOutOptions { Limit = limit });
        return sw.Elapsed.TotalMilliseconds;
    }

    private static async Task<double> MedianAsync(Func<Task<double>> run, double? first = null)
    {
        var times = new List<double>();
        if (first is { } f)
        {
            times.Add(f);
        }

        while (times.Count < 3)
        {
            times.Add(await run());
        }

        times.Sort();
        return times[1];
    }
}
