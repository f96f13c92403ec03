using System.Diagnostics;
using System.Globalization;
using System.Runtime.InteropServices;
using System.Text;

namespace FanOut.Benchmarks.Adaptive;

/// <summary>
/// <c>io-cpu [rounds] [results-dir]</c>: issue 36's I/O followed by CPU on the real clock. Each item awaits a 15 ms timer,
/// then spins 2 ms on a core, so past a few dozen in flight the items only queue for the cores: the answers a limit sees
/// stay fast (a timer's continuation runs where it fired) while each item's latency grows. Each round runs, in turn,
/// Fixed(16), Fixed(256), the default (the band) and the staged law on the bandwidth-delay product, and reports the time,
/// the limit at the end and the median item latency. Target: a limit near where throughput already peaks (16-32 on two
/// cores), not 256, at no more than Fixed(256)'s time by 10%. Writes <c>adaptive-io-cpu.md</c>.
/// </summary>
public static class IoThenCpuMeasurement
{
    public const int DefaultRounds = 3;

    private const int Items = 3_000;
    private static readonly TimeSpan s_wait = TimeSpan.FromMilliseconds(15);
    private static readonly TimeSpan s_spin = TimeSpan.FromMilliseconds(2);
    private static readonly CultureInfo s_inv = CultureInfo.InvariantCulture;

    public static async Task RunAsync(string resultsDirectory, int rounds)
    {
        var report = RealClockReport.Begin("I/O then CPU, real clock (issue 36)");
        report.AppendLine(s_inv, $"Command: `dotnet run -c Release --project bench/FanOut.Benchmarks -- io-cpu {rounds}`. {Items:N0} items, each `await Task.Delay({s_wait.TotalMilliseconds})` then a {s_spin.TotalMilliseconds} ms spin. Each round runs the contenders in turn.");
        report.AppendLine();
        report.AppendLine("| round | contender | time ms | limit at the end | peak | item latency p50 ms |");
        report.AppendLine("|---:|---|---:|---:|---:|---:|");
        var items = Enumerable.Range(0, Items).ToArray();
        for (var round = 0; round < rounds; round++)
        {
            (string Name, Func<ConcurrencyLimit> Limit)[] contenders =
            [
                ("Fixed(16)", () => ConcurrencyLimit.Fixed(16)),
                ("Fixed(256)", () => ConcurrencyLimit.Fixed(256)),
                ("default", () => ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions())),
            ];
            foreach (var (name, create) in contenders)
            {
                var limit = create();
                var latencies = new double[Items];
                var sw = Stopwatch.StartNew();
                await items.FanOutAsync(
                    async (i, ct) =>
                    {
                        var started = Stopwatch.GetTimestamp();
                        await Task.Delay(s_wait, ct);
                        var spin = Stopwatch.StartNew();
                        while (spin.Elapsed < s_spin)
                        {
                        }

                        latencies[i] = Stopwatch.GetElapsedTime(started).TotalMilliseconds;
                    },
                    new FanOutOptions { Limit = limit });
                var ms = sw.Elapsed.TotalMilliseconds;
                Array.Sort(latencies);
                report.AppendLine(s_inv, $"| {round} | {name} | {ms:F0} | {limit.Current} | {limit.Peak} | {latencies[Items / 2]:F0} |");
            }
        }

        await RealClockReport.EndAsync(report, resultsDirectory, "adaptive-io-cpu.md");
    }
}
