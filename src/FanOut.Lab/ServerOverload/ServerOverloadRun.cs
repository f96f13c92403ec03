using System.Diagnostics;
using System.Globalization;

namespace FanOut.Lab.ServerOverload;

/// <summary>
/// One cell of the server-overload table: a real Kestrel app on loopback whose handler calls a constrained backend,
/// protected as the row says, under open-loop load (arrivals on a schedule; latency from each request's intended start).
/// </summary>
public static class ServerOverloadRun
{
    /// <summary>How long a client waits before it gives up (and aborts the request, which the server sees).</summary>
    public static TimeSpan ClientTimeout { get; } = TimeSpan.FromSeconds(2);

    /// <summary>Runs <paramref name="row"/> at <paramref name="loadFactor"/> x the backend's capacity, in an app of its own.</summary>
    /// <param name="row">The protection.</param>
    /// <param name="backend">The dependency (shared by the cells; it must be idle between them).</param>
    /// <param name="loadFactor">Offered load as a multiple of <see cref="IOverloadBackend.CapacityPerSecond"/>.</param>
    /// <param name="warmup">Arrivals in this first stretch are sent but not counted (the adaptive limit's slow start).</param>
    /// <param name="measured">The counted stretch.</param>
    /// <param name="slo">A response counts as goodput when it is a 200 within this of its intended start.</param>
    public static async Task<OverloadCell> RunAsync(OverloadRow row, IOverloadBackend backend, double loadFactor, TimeSpan warmup, TimeSpan measured, TimeSpan slo)
    {
        ArgumentNullException.ThrowIfNull(row);
        ArgumentNullException.ThrowIfNull(backend);
        await using var app = await OverloadApp.StartAsync(row, backend).ConfigureAwait(false);
        return await RunLoadAsync(row, app, backend.CapacityPerSecond * loadFactor, loadFactor, warmup, measured, slo).ConfigureAwait(false);
    }

    /// <summary>One load step against a running <paramref name="app"/> (the lab's sweep runs four in one app, so the limit carries over).</summary>
    /// <param name="row">The protection, for the cell's label.</param>
    /// <param name="app">The service under test.</param>
    /// <param name="rate">Arrivals per second.</param>
    /// <param name="loadFactor">The load's multiple of capacity, for the cell's label.</param>
    /// <param name="warmup">Arrivals in this first stretch are sent but not counted.</param>
    /// <param name="measured">The counted stretch.</param>
    /// <param name="slo">A response counts as goodput when it is a 200 within this of its intended start.</param>
    /// <param name="live">Counters a timeline reads while the step runs; null for none.</param>
    public static async Task<OverloadCell> RunLoadAsync(OverloadRow row, OverloadApp app, double rate, double loadFactor, TimeSpan warmup, TimeSpan measured, TimeSpan slo, OverloadLiveCounters? live = null)
    {
        ArgumentNullException.ThrowIfNull(row);
        ArgumentNullException.ThrowIfNull(app);
        var samples = await OpenLoopAsync(app.WorkUrl, rate, warmup + measured, app.Limit, slo, live).ConfigureAwait(false);
        return Summarize(row, loadFactor, rate, samples.Requests, samples.Timeline, warmup, measured, slo);
    }

    private sealed record Sample(double IntendedSeconds, bool Critical, int Status, double LatencyMs);

    private static async Task<(Sample[] Requests, List<(double, int)> Timeline)> OpenLoopAsync(Uri url, double rate, TimeSpan length, ConcurrencyLimit? limit, TimeSpan slo, OverloadLiveCounters? live)
    {
        using var handler = new SocketsHttpHandler { UseProxy = false, MaxConnectionsPerServer = int.MaxValue, PooledConnectionIdleTimeout = TimeSpan.FromSeconds(30) };
        using var client = new HttpClient(handler) { Timeout = Timeout.InfiniteTimeSpan };
        var count = (int)(rate * length.TotalSeconds);
        var samples = new Sample[count];
        var sends = new Task[count];
        var timeline = new List<(double, int)>();
        var started = Stopwatch.GetTimestamp();
        var nextSample = 0.0;
        for (var i = 0; i < count; i++)
        {
            var intended = i / rate;
            var wait = intended - Stopwatch.GetElapsedTime(started).TotalSeconds;
            if (wait > 0.001)
            {
                await Task.Delay(TimeSpan.FromSeconds(wait)).ConfigureAwait(false);
            }

            if (limit is not null && intended >= nextSample)
            {
                timeline.Add((intended, limit.Current));
                nextSample += 0.1;
            }

            // Every fifth request is critical (the header only the priorities row reads), spread evenly.
            sends[i] = SendAsync(client, url, i, intended, critical: i % 5 == 0, started, samples, slo, live);
        }

        await Task.WhenAll(sends).ConfigureAwait(false);
        return (samples, timeline);
    }

    private static async Task SendAsync(HttpClient client, Uri url, int index, double intended, bool critical, long started, Sample[] samples, TimeSpan slo, OverloadLiveCounters? live)
    {
        using var inFlight = live?.Probe.Enter();
        var status = 0;
        using var timeout = new CancellationTokenSource(ClientTimeout);
        try
        {
            using var request = new HttpRequestMessage(HttpMethod.Get, url);
            if (critical)
            {
                request.Headers.Add("X-Critical", "1");
            }

            using var response = await client.SendAsync(request, timeout.Token).ConfigureAwait(false);
            await response.Content.ReadAsByteArrayAsync(timeout.Token).ConfigureAwait(false);
            status = (int)response.StatusCode;
        }
        catch (Exception e) when (e is OperationCanceledException or HttpRequestException)
        {
            status = 0; // timed out or failed
        }

        var latencyMs = (Stopwatch.GetElapsedTime(started).TotalSeconds - intended) * 1000;
        samples[index] = new Sample(intended, critical, status, latencyMs);
        live?.Count(status, latencyMs <= slo.TotalMilliseconds);
    }

    private static OverloadCell Summarize(OverloadRow row, double loadFactor, double rate, Sample[] all, List<(double, int)> timeline, TimeSpan warmup, TimeSpan measured, TimeSpan slo)
    {
        var counted = all.Where(s => s.IntendedSeconds >= warmup.TotalSeconds).ToArray();
        var ok = counted.Where(s => s.Status == 200).Select(s => s.LatencyMs).Order().ToArray();
        var good = ok.Count(ms => ms <= slo.TotalMilliseconds);
        var refused = counted.Count(s => s.Status is 503 or 429);
        var failed = counted.Length - ok.Length - refused;
        var critical = counted.Where(s => s.Critical).ToArray();
        var sheddable = counted.Where(s => !s.Critical).ToArray();
        var meanLimit = timeline.Count == 0 ? 0 : timeline.Where(t => t.Item1 >= warmup.TotalSeconds).Select(t => (double)t.Item2).DefaultIfEmpty(0).Average();
        return new OverloadCell(
            row.Name,
            loadFactor,
            rate,
            counted.Length,
            good / measured.TotalSeconds,
            Percentile(ok, 0.50),
            Percentile(ok, 0.99),
            counted.Length == 0 ? 0 : (double)refused / counted.Length,
            counted.Length == 0 ? 0 : (double)failed / counted.Length,
            critical.Length == 0 ? 0 : (double)critical.Count(s => s.Status == 200) / critical.Length,
            sheddable.Length == 0 ? 0 : (double)sheddable.Count(s => s.Status == 200) / sheddable.Length,
            meanLimit,
            timeline,
            Percentile(critical.Where(s => s.Status == 200).Select(s => s.LatencyMs).Order().ToArray(), 0.99),
            Percentile(sheddable.Where(s => s.Status == 200).Select(s => s.LatencyMs).Order().ToArray(), 0.99));
    }

    private static double Percentile(double[] sorted, double p) =>
        sorted.Length == 0 ? double.NaN : sorted[Math.Min(sorted.Length - 1, (int)Math.Ceiling(p * sorted.Length) - 1)];

    /// <summary>The table's header, in markdown.</summary>
    public static string MarkdownHeader =>
        "| row | load | offered/s | goodput/s (SLO) | p50 ms | p99 ms | refused | failed/timed out | critical ok | mean limit |\n" +
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|";

    /// <summary>One cell as a markdown row.</summary>
    public static string MarkdownRow(OverloadCell cell)
    {
        ArgumentNullException.ThrowIfNull(cell);
        return string.Create(CultureInfo.InvariantCulture,
            $"| {cell.Row} | {cell.LoadFactor:0.#}x | {cell.OfferedPerSecond:0} | {cell.GoodputPerSecond:0.0} | {cell.P50Ms:0} | {cell.P99Ms:0} | {cell.RefusedShare:P0} | {cell.FailedShare:P0} | {cell.CriticalSuccess:P1} | {(cell.MeanLimit > 0 ? cell.MeanLimit.ToString("0.0", CultureInfo.InvariantCulture) : "")} |");
    }
}
