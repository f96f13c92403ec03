using System.Diagnostics;
using System.Globalization;
using System.Runtime.InteropServices;
using System.Text;

using FanOut.Benchmarks.Overload;

namespace FanOut.Benchmarks.Adaptive;

/// <summary>
/// <c>fairness [rounds] [results-dir]</c>: issue 36's independent clients on the real clock. Clients in one process, each
/// with its own default adaptive limit (as separate services have), run items against one downstream that serves 32 calls
/// at once for 20 ms and answers 429 at once beyond that. Judged over 5-10 s: two and four clients that start together
/// share it fairly (Jain's index at least 0.9), and a client that joins at 3 s beside one already running gets its half
/// (at least 0.45 of the goodput). The simulation suite asserts the same shapes on the fake clock (<c>LawShapeTests</c>).
/// Writes <c>adaptive-fairness.md</c>.
/// </summary>
public static class FairnessMeasurement
{
    public const int DefaultRounds = 3;

    private const int Capacity = 32;
    private static readonly TimeSpan s_service = TimeSpan.FromMilliseconds(20);
    private static readonly TimeSpan s_run = TimeSpan.FromSeconds(10);
    private static readonly TimeSpan s_judgedFrom = TimeSpan.FromSeconds(5);
    private static readonly TimeSpan s_joinAt = TimeSpan.FromSeconds(3);
    private static readonly CultureInfo s_inv = CultureInfo.InvariantCulture;

    public static async Task RunAsync(string resultsDirectory, int rounds)
    {
        var report = RealClockReport.Begin("Independent clients on one downstream, real clock (issue 36)");
        report.AppendLine(s_inv, $"Command: `dotnet run -c Release --project bench/FanOut.Benchmarks -- fairness {rounds}`. A downstream of {Capacity} calls at once, {s_service.TotalMilliseconds:F0} ms each, 429 at once beyond; each client runs items for {s_run.TotalSeconds:F0} s with its own `ConcurrencyLimit.Adaptive()`; judged over {s_judgedFrom.TotalSeconds:F0}-{s_run.TotalSeconds:F0} s. Targets: Jain's index >= 0.9 for clients that start together; a client joining at {s_joinAt.TotalSeconds:F0} s gets >= 0.45 of the goodput.");
        report.AppendLine();
        report.AppendLine("| round | clients | goodput per client, judged (ok/s) | total / capacity | Jain's index (joiner's share) | 429 share | limits at the end |");
        report.AppendLine("|---:|---|---|---:|---:|---:|---|");
        for (var round = 0; round < rounds; round++)
        {
            foreach (var (label, starts) in new (string, TimeSpan[])[]
            {
                ("two together", [TimeSpan.Zero, TimeSpan.Zero]),
                ("four together", [TimeSpan.Zero, TimeSpan.Zero, TimeSpan.Zero, TimeSpan.Zero]),
                ("one, then a joiner at 3 s", [TimeSpan.Zero, s_joinAt]),
            })
            {
                var cell = await RunCellAsync(starts);
                var judged = (s_run - s_judgedFrom).TotalSeconds;
                var rates = cell.Successes.Select(s => s / judged).ToArray();
                var verdict = starts[^1] > TimeSpan.Zero ? rates[^1] / rates.Sum() : Jain(rates);
                report.AppendLine(s_inv, $"| {round} | {label} | {string.Join(" / ", rates.Select(r => r.ToString("F0", s_inv)))} | {rates.Sum() / (Capacity / s_service.TotalSeconds):F2} | **{verdict:F2}** | {(double)cell.Rejected / Math.Max(1, cell.Calls):P1} | {string.Join(" / ", cell.Limits)} |");
            }
        }

        await RealClockReport.EndAsync(report, resultsDirectory, "adaptive-fairness.md");
    }

    /// <summary>Jain's fairness index: 1 when every client gets the same, 1/n when one gets everything.</summary>
    private static double Jain(double[] rates) => rates.Sum() * rates.Sum() / (rates.Length * rates.Sum(r => r * r));

    private static async Task<(long[] Successes, long Calls, long Rejected, int[] Limits)> RunCellAsync(TimeSpan[] starts)
    {
        var downstream = new RejectingDownstream(Capacity, s_service);
        var successes = new long[starts.Length];
        var limits = starts.Select(_ => ConcurrencyLimit.Adaptive()).ToArray();
        var clock = Stopwatch.StartNew();
        using var end = new CancellationTokenSource(s_run);
        await Task.WhenAll(starts.Select((start, client) => RunClientAsync(client, start)));
        return (successes, downstream.Calls, downstream.Rejected, limits.Select(l => l.Current).ToArray());

        async Task RunClientAsync(int client, TimeSpan start)
        {
            await Task.Delay(start);
            await TimeBoxedRun.RunAsync(
                limits[client],
                async (item, ct) =>
                {
                    await downstream.CallAsync(item, ct);
                    if (clock.Elapsed >= s_judgedFrom && clock.Elapsed < s_run)
                    {
                        Interlocked.Increment(ref successes[client]);
                    }
                },
                end.Token);
        }
    }
}
