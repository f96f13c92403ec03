using System.Collections.Concurrent;
using System.Diagnostics;
using System.Diagnostics.Tracing;
using System.Globalization;
using System.Runtime.InteropServices;
using System.Text;

namespace FanOut.Benchmarks.Adaptive;

/// <summary>
/// <c>noise [rounds] [results-dir]</c>: issue 36's latency noise without any overload, on the real clock. Every item waits a
/// lognormal time (median 40 ms, p99 ten times that) and the downstream has room for everything, so the best limit is the
/// most: the default must keep its throughput near Fixed(256)'s (target 0.8x) and never collapse. Each round runs, in
/// turn, Fixed(256), the default of one call, and one <see cref="ConcurrencyLimit.Adaptive(AdaptiveLimitOptions?)"/>
/// shared by two calls at once; every contender of a round waits the same times. Writes <c>adaptive-noise.md</c>.
/// </summary>
public static class NoiseMeasurement
{
    public const int DefaultRounds = 3;

    private const int Items = 20_000;
    private const double MedianMs = 40;


    private static readonly CultureInfo s_inv = CultureInfo.InvariantCulture;

    public static async Task RunAsync(string resultsDirectory, int rounds)
    {
        var report = RealClockReport.Begin("Latency noise without overload, real clock (issue 36)");
        report.AppendLine(s_inv, $"Command: `dotnet run -c Release --project bench/FanOut.Benchmarks -- noise {rounds}`. {Items:N0} items, each `Task.Delay` of a lognormal time (median {MedianMs} ms, p99 {10 * MedianMs} ms), no capacity limit. Each round runs the three contenders in turn on the same waits (seed = round). Target: throughput >= 0.8x Fixed(256) in every round, the limit never collapsing.");
        report.AppendLine();
        report.AppendLine("| round | Fixed(256) ms | default ms | default / Fixed | default's limit at the end | shared by two calls ms | shared / Fixed | shared limit at the end | the shared limit's cuts, by reason | the default's cuts, by reason |");
        report.AppendLine("|---:|---:|---:|---:|---:|---:|---:|---:|---|---|");
        using var cuts = new CutListener();
        var items = Enumerable.Range(0, Items).ToArray();
        for (var round = 0; round < rounds; round++)
        {
            var waits = Waits(round);
            ValueTask Body(int i, CancellationToken ct) => new(Task.Delay(waits[i], ct));

            var sw = Stopwatch.StartNew();
            await items.FanOutAsync(256, Body);
            var fixedMs = sw.Elapsed.TotalMilliseconds;

            var own = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { Name = $"noise-default-{round}" });
            sw.Restart();
            await items.FanOutAsync(Body, new FanOutOptions { Limit = own });
            var defaultMs = sw.Elapsed.TotalMilliseconds;

            var sharedName = $"noise-shared-{round}";
            var shared = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { Name = sharedName });
            var halves = new[] { items.Where(i => i % 2 == 0).ToArray(), items.Where(i => i % 2 == 1).ToArray() };
            sw.Restart();
            await Task.WhenAll(halves.Select(half => half.FanOutAsync(Body, new FanOutOptions { Limit = shared })));
            var sharedMs = sw.Elapsed.TotalMilliseconds;

            report.AppendLine(s_inv, $"| {round} | {fixedMs:F0} | {defaultMs:F0} | **{fixedMs / defaultMs:F2}x** | {own.Current} | {sharedMs:F0} | **{fixedMs / sharedMs:F2}x** | {shared.Current} | {cuts.Describe(sharedName)} | {cuts.Describe($"noise-default-{round}")} |");
        }

        await RealClockReport.EndAsync(report, resultsDirectory, "adaptive-noise.md");
    }

    /// <summary>Counts every decrease of a limit by its reason, from the FanOut event source's LimitChanged events (in process).</summary>
    private sealed class CutListener : EventListener
    {
        private readonly ConcurrentDictionary<(string Name, string Reason), int> _cuts = new();
        private readonly ConcurrentQueue<(string Name, double WindowMedianMs, double BaselineMs)> _figures = new();

        /// <summary>The cuts of limit <paramref name="name"/> by reason, and the window medians and baselines they were decided on.</summary>
        public string Describe(string name)
        {
            var reasons = _cuts.Where(c => c.Key.Name == name).OrderByDescending(c => c.Value).Select(c => $"{c.Key.Reason} {c.Value}").ToList();
            if (reasons.Count == 0)
            {
                return "none";
            }

            var figures = _figures.Where(f => f.Name == name && f.BaselineMs > 0).ToList();
            return figures.Count == 0 ? string.Join(", ", reasons)
                : string.Create(s_inv, $"{string.Join(", ", reasons)} (window medians {figures.Min(f => f.WindowMedianMs):F0}-{figures.Max(f => f.WindowMedianMs):F0} ms on baselines {figures.Min(f => f.BaselineMs):F0}-{figures.Max(f => f.BaselineMs):F0} ms)");
        }

        protected override void OnEventSourceCreated(EventSource eventSource)
        {
            if (eventSource.Name == FanOut.Diagnostics.FanOutEvents.SourceName)
            {
                EnableEvents(eventSource, EventLevel.Informational, (EventKeywords)FanOut.Diagnostics.FanOutEvents.LimitChangesKeyword);
            }
        }

        protected override void OnEventWritten(EventWrittenEventArgs e)
        {
            // Payload: kind, name, from, to, reason, ... (FanOutEvents.LimitChangedId's documented order).
            if (e.EventId == FanOut.Diagnostics.FanOutEvents.LimitChangedId && e.Payload is { } p && (int)p[3]! < (int)p[2]!)
            {
                _cuts.AddOrUpdate(((string)p[1]!, (string)p[4]!), 1, static (_, n) => n + 1);
                _figures.Enqueue(((string)p[1]!, (double)p[5]!, (double)p[6]!));
            }
        }
    }

    /// <summary>The round's waits: lognormal by Box-Muller from a seeded generator, so every contender waits the same.</summary>
    private static TimeSpan[] Waits(int seed)
    {
        var random = new Random(seed);
        var waits = new TimeSpan[Items];
        for (var i = 0; i < Items; i++)
        {
            var z = Gaussian.Next(random);
            waits[i] = TimeSpan.FromMilliseconds(MedianMs * Math.Exp(Gaussian.HeavyTailSigma * z));
        }

        return waits;
    }
}
