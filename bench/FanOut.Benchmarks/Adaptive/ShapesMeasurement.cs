using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Runtime.InteropServices;
using System.Text;

namespace FanOut.Benchmarks.Adaptive;

/// <summary>
/// <c>shapes [rounds] [results-dir] [shape]</c>: issue 36's downstream shapes on the real clock, each against its best fixed limit
/// in the same round (the simulation suite asserts them on the fake clock, <c>LawShapeTests</c>):
/// latency that rises smoothly with the calls in service (20 ms x (1 + (n/22)^2), peak throughput at 22), bimodal latency
/// (90% 10 ms, 10% 160 ms, no overload), a hard cap of 32 whose "no" takes 200 ms, and CPU-bound synchronous bodies
/// (5 ms of spinning on this machine's cores); the same cap whose "no" holds its place in service while it comes; and a cap
/// whose every 429 carries "Retry-After: 1".
/// A fourth argument runs only the shapes whose name contains it. Writes <c>adaptive-shapes.md</c>.
/// </summary>
public static class ShapesMeasurement
{
    public const int DefaultRounds = 3;

    private static readonly TimeSpan s_run = TimeSpan.FromSeconds(10);
    private static readonly TimeSpan s_judgedFrom = TimeSpan.FromSeconds(5);
    private static readonly CultureInfo s_inv = CultureInfo.InvariantCulture;

    public static async Task RunAsync(string resultsDirectory, int rounds, string only = "")
    {
        var report = RealClockReport.Begin("Downstream shapes, real clock (issue 36)");
        report.AppendLine(s_inv, $"Command: `dotnet run -c Release --project bench/FanOut.Benchmarks -- shapes {rounds}`. The time-boxed shapes run {s_run.TotalSeconds:F0} s and are judged over {s_judgedFrom.TotalSeconds:F0}-{s_run.TotalSeconds:F0} s; in each round the default (`ConcurrencyLimit.Adaptive()`, a new one per run) runs right after its comparison.");
        report.AppendLine();
        report.AppendLine("| round | shape | target | the comparison | the default | ratio | the default's limit at the end | 429 share |");
        report.AppendLine("|---:|---|---|---:|---:|---:|---:|---:|");
        var cores = Environment.ProcessorCount;
        for (var round = 0; round < rounds; round++)
        {
            if (Runs("smooth"))
            {
                var knee = await TimeBoxedAsync(ConcurrencyLimit.Fixed(22), SmoothKnee());
                var kneeDefault = await TimeBoxedAsync(ConcurrencyLimit.Adaptive(), SmoothKnee());
                Row(round, "latency rising smoothly, peak at 22", ">= 0.9x Fixed(22)", knee, kneeDefault);
            }

            if (Runs("knee-heavy"))
            {
                var kneeHeavy = await TimeBoxedAsync(ConcurrencyLimit.Fixed(22), SmoothKneeHeavyTail(round));
                var kneeHeavyDefault = await TimeBoxedAsync(ConcurrencyLimit.Adaptive(), SmoothKneeHeavyTail(round));
                Row(round, "the same knee behind a heavy tail (p99 10x)", ">= 0.8x Fixed(22)", kneeHeavy, kneeHeavyDefault);
            }

            if (Runs("bimodal"))
            {
                var bimodal = await TimeBoxedAsync(ConcurrencyLimit.Fixed(256), Bimodal(round));
                var bimodalDefault = await TimeBoxedAsync(ConcurrencyLimit.Adaptive(), Bimodal(round));
                Row(round, "bimodal, 90% 10 ms, 10% 160 ms", ">= 0.8x Fixed(256)", bimodal, bimodalDefault);
            }

            if (Runs("slow"))
            {
                var slowNo = await TimeBoxedAsync(ConcurrencyLimit.Fixed(32), SlowNo(holdsItsPlace: false));
                var slowNoDefault = await TimeBoxedAsync(ConcurrencyLimit.Adaptive(), SlowNo(holdsItsPlace: false));
                Row(round, "cap 32, 20 ms, a slow \"no\" (200 ms)", ">= 0.8x Fixed(32), <= 5% 429", slowNo, slowNoDefault);
            }

            if (Runs("holds"))
            {
                var holds = await TimeBoxedAsync(ConcurrencyLimit.Fixed(32), SlowNo(holdsItsPlace: true));
                var holdsDefault = await TimeBoxedAsync(ConcurrencyLimit.Adaptive(), SlowNo(holdsItsPlace: true));
                Row(round, "cap 32, 20 ms, a slow \"no\" that holds its place (200 ms)", ">= 0.8x Fixed(32), <= 5% 429", holds, holdsDefault);
            }

            if (Runs("retry-after"))
            {
                var hinted = await TimeBoxedAsync(ConcurrencyLimit.Fixed(32), CapWithRetryAfter());
                var hintedDefault = await TimeBoxedAsync(ConcurrencyLimit.Adaptive(), CapWithRetryAfter());
                Row(round, "cap 32, 20 ms, every 429 with \"Retry-After: 1\"", ">= 0.8x Fixed(32), <= 5% 429", hinted, hintedDefault);
            }

            if (Runs("cpu"))
            {
                var spinFixed = await SpinAsync(ConcurrencyLimit.Fixed(cores));
                var spinDefault = await SpinAsync(ConcurrencyLimit.Adaptive());
                report.AppendLine(s_inv, $"| {round} | CPU-bound synchronous bodies, {SpinItems:N0} x 5 ms | <= 1.1x Fixed({cores})'s time | {spinFixed.Elapsed.TotalMilliseconds:F0} ms | {spinDefault.Elapsed.TotalMilliseconds:F0} ms | **{spinDefault.Elapsed / spinFixed.Elapsed:F2}x** | {spinDefault.Limit} | |");
            }
        }

        await RealClockReport.EndAsync(report, resultsDirectory, "adaptive-shapes.md");

        bool Runs(string shape) => only.Length == 0 || shape.Contains(only, StringComparison.OrdinalIgnoreCase);

        void Row(int round, string shape, string target, Cell comparison, Cell adaptive) =>
            report.AppendLine(s_inv, $"| {round} | {shape} | {target} | {comparison.Rate:F0} ok/s | {adaptive.Rate:F0} ok/s | **{adaptive.Rate / comparison.Rate:F2}x** | {adaptive.Limit} | {adaptive.RejectedShare:P1} |");
    }

    private const int SpinItems = 1200;

    private sealed record Cell(double Rate, int Limit, double RejectedShare);

    /// <summary>A downstream call: the time it takes given the calls in service (itself included), whether it says no, and whether a "no" holds its place in service while it comes.</summary>
    private sealed class Downstream(Func<int, (TimeSpan Wait, bool No)> answer, bool noHoldsItsPlace = false, TimeSpan? retryAfter = null)
    {
        private int _inService;
        private long _calls;
        private long _rejected;

        public double RejectedShare => (double)Interlocked.Read(ref _rejected) / Math.Max(1, Interlocked.Read(ref _calls));

        public async ValueTask CallAsync(CancellationToken cancellationToken)
        {
            Interlocked.Increment(ref _calls);
            var (wait, no) = answer(Interlocked.Increment(ref _inService));
            var inService = true;
            try
            {
                if (no)
                {
                    Interlocked.Increment(ref _rejected);
                    if (!noHoldsItsPlace)
                    {
                        Interlocked.Decrement(ref _inService); // a refused call takes no place in service while its "no" comes
                        inService = false;
                    }
                }

                await Task.Delay(wait, cancellationToken);
            }
            finally
            {
                if (inService)
                {
                    Interlocked.Decrement(ref _inService);
                }
            }

            if (no)
            {
                throw retryAfter is { } hint ? new OverloadedException("429 Too Many Requests, Retry-After: 1", hint) : new HttpRequestException("429 Too Many Requests", null, HttpStatusCode.TooManyRequests);
            }
        }
    }

    private static Downstream SmoothKnee() => new(n => (TimeSpan.FromMilliseconds(KneeMs(n)), false));

    /// <summary>20 ms times (1 + (n / 22)^2) with n calls in service: throughput peaks at 22.</summary>
    private static double KneeMs(int n) => 20 * (1 + Math.Pow(n / 22.0, 2));

    /// <summary>The smooth knee times a lognormal whose p99 is 10x its median: noise on a downstream that has no cap.</summary>
    private static Downstream SmoothKneeHeavyTail(int seed)
    {
        var random = new Random(seed);
        var gate = new Lock();
        return new(n =>
        {
            double normal;
            lock (gate)
            {
                normal = Gaussian.Next(random);
            }

            return (TimeSpan.FromMilliseconds(KneeMs(n) * Math.Exp(Gaussian.HeavyTailSigma * normal)), false);
        });
    }

    private static Downstream Bimodal(int seed)
    {
        var random = new Random(seed);
        var gate = new Lock();
        return new(_ =>
        {
            lock (gate)
            {
                return (TimeSpan.FromMilliseconds(random.NextDouble() < 0.9 ? 10 : 160), false);
            }
        });
    }

    private static Downstream SlowNo(bool holdsItsPlace) => new(n => n > 32 ? (TimeSpan.FromMilliseconds(200), true) : (TimeSpan.FromMilliseconds(20), false), holdsItsPlace);

    private static Downstream CapWithRetryAfter() => new(n => n > 32 ? (TimeSpan.Zero, true) : (TimeSpan.FromMilliseconds(20), false), retryAfter: TimeSpan.FromSeconds(1));

    private static async Task<Cell> TimeBoxedAsync(ConcurrencyLimit limit, Downstream downstream)
    {
        long judged = 0;
        var clock = Stopwatch.StartNew();
        using var end = new CancellationTokenSource(s_run);
        await TimeBoxedRun.RunAsync(
            limit,
            async (_, ct) =>
            {
                await downstream.CallAsync(ct);
                if (clock.Elapsed >= s_judgedFrom && clock.Elapsed < s_run)
                {
                    Interlocked.Increment(ref judged);
                }
            },
            end.Token);

        return new(judged / (s_run - s_judgedFrom).TotalSeconds, limit.Current, downstream.RejectedShare);
    }

    private static async Task<(TimeSpan Elapsed, int Limit)> SpinAsync(ConcurrencyLimit limit)
    {
        var clock = Stopwatch.StartNew();
        await Enumerable.Range(0, SpinItems).FanOutAsync(
            (_, _) =>
            {
                var spin = Stopwatch.StartNew();
                while (spin.Elapsed < TimeSpan.FromMilliseconds(5))
                {
                }

                return ValueTask.CompletedTask;
            },
            new FanOutOptions { Limit = limit });
        return (clock.Elapsed, limit.Current);
    }
}
