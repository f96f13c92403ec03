using System.Diagnostics;
using System.Globalization;
using System.Text;

namespace FanOut.Benchmarks.Overload;

/// <summary>
/// <c>overload [results-dir]</c>: FanOut with default options against downstreams that reject beyond their capacity or
/// beyond a rate, in real time on this machine: items that succeeded, share of calls rejected, ok/s. Writes overload.md.
/// </summary>
public static class OverloadMeasurement
{
    private const int RejectingCapacity = 8;
    private const int RejectingItems = 1000;
    private const double BucketRate = 200;
    private const int BucketBurst = 10;
    private const int BucketItems = 600;
    private static readonly TimeSpan s_rejectingService = TimeSpan.FromMilliseconds(10);
    private static readonly TimeSpan s_bucketService = TimeSpan.FromMilliseconds(20);

    public static async Task RunAsync(string resultsDirectory)
    {
        var report = new StringBuilder();
        report.AppendLine("# Overload: FanOut's default against rejecting downstreams");
        report.AppendLine();
        report.AppendLine(CultureInfo.InvariantCulture, $"Machine: {Environment.ProcessorCount} logical cores, {System.Runtime.InteropServices.RuntimeInformation.OSDescription}, {System.Runtime.InteropServices.RuntimeInformation.FrameworkDescription}. Command: `dotnet run -c Release --project bench/FanOut.Benchmarks -- overload`. Real time, default `FanOutOptions` (null), three runs each.");
        report.AppendLine();
        report.AppendLine("| downstream | items | run | ok | calls | rejected | rejected share | ok/s | seconds |");
        report.AppendLine("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (var run = 1; run <= 3; run++)
        {
            var rejecting = new RejectingDownstream(RejectingCapacity, s_rejectingService);
            await RowAsync(report, $"capacity {RejectingCapacity}, 10 ms, 429 beyond", RejectingItems, run, rejecting.CallAsync, () => (rejecting.Calls, rejecting.Rejected));
        }

        foreach (var hint in new[] { false, true })
        {
            for (var run = 1; run <= 3; run++)
            {
                var bucket = new TokenBucketDownstream(BucketRate, BucketBurst, s_bucketService, hint);
                await RowAsync(report, $"token bucket {BucketRate}/s, burst {BucketBurst}, 20 ms, {(hint ? "Retry-After hint" : "no hint")}", BucketItems, run, bucket.CallAsync, () => (bucket.Calls, bucket.Rejected));
            }
        }

        Directory.CreateDirectory(resultsDirectory);
        await File.WriteAllTextAsync(Path.Combine(resultsDirectory, "overload.md"), report.ToString());
        Console.WriteLine(report);
    }

    private static async Task RowAsync(StringBuilder report, string name, int items, int run, Func<int, CancellationToken, ValueTask<int>> call, Func<(long Calls, long Rejected)> counts)
    {
        var ok = 0;
        var clock = Stopwatch.StartNew();
        try
        {
            var results = await Enumerable.Range(0, items).ToArray().FanOutAsync(call);
            ok = results.Length;
        }
        catch (FanOutException e)
        {
            ok = (int)(e.ItemCount - e.FailureCount);
        }
        catch (HttpRequestException)
        {
            ok = -1; // FailFast: the run faulted
        }

        var seconds = clock.Elapsed.TotalSeconds;
        var (calls, rejected) = counts();
        report.AppendLine(CultureInfo.InvariantCulture,
            $"| {name} | {items} | {run} | {(ok < 0 ? "faulted" : ok.ToString("N0", CultureInfo.InvariantCulture))} | {calls:N0} | {rejected:N0} | {(double)rejected / Math.Max(1, calls):P1} | {Math.Max(ok, 0) / seconds:N0} | {seconds:F2} |");
    }
}
