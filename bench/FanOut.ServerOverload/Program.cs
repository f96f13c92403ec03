using System.Globalization;
using System.Text;

using FanOut;
using FanOut.Lab.ServerOverload;

// dotnet run -c Release --project bench/FanOut.ServerOverload -- [simulated|postgres|all|timeline|queue|fanout|sweep|start|limit4x|limit2x|compose] [measured seconds] [warm-up seconds] [rounds] [row filter]
// Environment: POOL (the backend's connections at once, default 4), SERVICE_MS (one query's time, default 40); BACKEND=cpu
// makes sweep's bottleneck the service's own CPU (SHA-256 for SERVICE_MS per request, default 5) instead of the database;
// FANOUT_LEAVE_OUT=Rule[,Rule] leaves those rules of the adaptive law out of every limit (the ablation, docs/adaptive.md).
FanOut.AdaptiveLimitOptions.RulesLeftOutByDefault = Enum.Parse<FanOut.Limits.Adaptive.BandwidthDelayRules>(Environment.GetEnvironmentVariable("FANOUT_LEAVE_OUT") ?? "None");
var which = args.Length > 0 ? args[0] : "all";
if (which is not ("simulated" or "postgres" or "all" or "timeline" or "queue" or "fanout" or "sweep" or "start" or "limit4x" or "limit2x" or "compose"))
{
    Console.Error.WriteLine($"unknown mode '{which}': choose simulated, postgres, all, timeline, queue, fanout, sweep, start, limit4x, limit2x or compose.");
    return 2;
}

var measured = TimeSpan.FromSeconds(args.Length > 1 ? double.Parse(args[1], CultureInfo.InvariantCulture) : 4);
var warmup = TimeSpan.FromSeconds(args.Length > 2 ? double.Parse(args[2], CultureInfo.InvariantCulture) : 1.5);
var cpu = Environment.GetEnvironmentVariable("BACKEND") is "cpu";
var capacity = int.Parse(Environment.GetEnvironmentVariable("POOL") ?? (cpu ? $"{Environment.ProcessorCount}" : "4"), CultureInfo.InvariantCulture);
var serviceTime = TimeSpan.FromMilliseconds(double.Parse(Environment.GetEnvironmentVariable("SERVICE_MS") ?? (cpu ? "5" : "40"), CultureInfo.InvariantCulture));
var slo = TimeSpan.FromMilliseconds(200);
var output = new StringBuilder();

if (which == "timeline")
{
    // The adaptive limit over time at 2x and 4x on the simulated dependency (report.html's timeline, as text).
    await using var backend = new SimulatedBackend(capacity, serviceTime);
    foreach (var load in new[] { 2.0, 4.0 })
    {
        var cell = await ServerOverloadRun.RunAsync(OverloadRow.FanOutAdaptive, backend, load, warmup, measured, slo);
        Line(ServerOverloadRun.MarkdownRow(cell));
        Line("limit every 0.5 s: " + string.Join(' ', cell.LimitTimeline.Where((_, i) => i % 5 == 0).Select(t => t.Limit)));
    }
}

if (which == "queue" && PostgresServer.WhyNot() is null)
{
    // FanOut's queue room per permit against admitted p99, on PostgreSQL at 2x and 4x.
    await using var server = await PostgresServer.StartAsync();
    await using var backend = new PostgresBackend(server, capacity, serviceTime);
    await backend.WarmAsync();
    Line(ServerOverloadRun.MarkdownHeader);
    foreach (var queuePerPermit in new[] { 1.0, 0.5, 0.25 })
    {
        foreach (var load in new[] { 2.0, 4.0 })
        {
            var row = OverloadRow.FanOutAdaptive with { Name = $"FanOut adaptive, QueuePerPermit {queuePerPermit}", QueuePerPermit = queuePerPermit };
            Line(ServerOverloadRun.MarkdownRow(await ServerOverloadRun.RunAsync(row, backend, load, warmup, measured, slo)));
        }
    }
}

if (which == "fanout" && PostgresServer.WhyNot() is null)
{
    // The two FanOut rows alone at 2x and 4x on PostgreSQL, after a change to the package.
    await using var server = await PostgresServer.StartAsync();
    await using var backend = new PostgresBackend(server, capacity, serviceTime);
    await backend.WarmAsync();
    Line(ServerOverloadRun.MarkdownHeader);
    foreach (var row in new[] { OverloadRow.FanOutAdaptive, OverloadRow.FanOutPriorities, OverloadRow.FanOutPrioritiesViaRateLimiter })
    {
        foreach (var load in new[] { 2.0, 4.0 })
        {
            Line(ServerOverloadRun.MarkdownRow(await ServerOverloadRun.RunAsync(row, backend, load, warmup, measured, slo)));
        }
    }
}

if (which == "start" && PostgresServer.WhyNot() is null)
{
    // A cold service's first contact is a burst: FanOut adaptive started at 4x load on the core's starting limit (DefaultLimit)
    // and at 16, alternating in rounds; with a warm-up of 0 the first round's queue counts.
    var rounds = args.Length > 3 ? int.Parse(args[3], CultureInfo.InvariantCulture) : 3;
    await using var server = await PostgresServer.StartAsync();
    await using var backend = new PostgresBackend(server, capacity, serviceTime);
    await backend.WarmAsync();
    Line(ServerOverloadRun.MarkdownHeader);
    for (var round = 0; round < rounds; round++)
    {
        foreach (var row in new[] { OverloadRow.FanOutAdaptive, OverloadRow.FanOutAdaptiveStart16 })
        {
            var cell = await ServerOverloadRun.RunAsync(row, backend, 4, warmup, measured, slo);
            Line(ServerOverloadRun.MarkdownRow(cell) + $" load average {File.ReadAllText("/proc/loadavg").Split(' ')[0]}");
        }
    }
}

if (which is "limit4x" or "limit2x" && PostgresServer.WhyNot() is null)
{
    // The priorities row's adaptive limit at 4x, as the sweep reaches it (0.5x, 1x, 2x first): how long it sat below the
    // pool's size, where critical requests alone (80% of the capacity) queue. Rounds alternate with the row on a fixed 5,
    // or with the rows a fifth argument lists ("adaptive", "priorities").
    var rounds = args.Length > 3 ? int.Parse(args[3], CultureInfo.InvariantCulture) : 3;
    OverloadRow[] limitRows = args.Length > 4
        ? [.. args[4].Split(',').Select(r => r switch
        {
            "adaptive" => OverloadRow.FanOutAdaptive,
            "priorities" => OverloadRow.FanOutPriorities,
            _ => throw new ArgumentException($"unknown row '{r}': choose adaptive or priorities."),
        })]
        : [OverloadRow.FanOutPriorities, OverloadRow.FanOutPrioritiesFixed(5)];
    await using var server = await PostgresServer.StartAsync();
    await using var backend = new PostgresBackend(server, capacity, serviceTime);
    await backend.WarmAsync();
    for (var round = 0; round < rounds; round++)
    {
        foreach (var row in limitRows)
        {
            await using var app = await OverloadApp.StartAsync(row, backend);
            OverloadCell? cell = null;
            // limit2x stops at 2x: the limit every 0.1 s there instead.
            foreach (var load in which == "limit2x" ? new[] { 0.5, 1, 2 } : new[] { 0.5, 1, 2, 4 })
            {
                cell = await ServerOverloadRun.RunLoadAsync(row, app, load * backend.CapacityPerSecond, load, warmup, measured, slo);
            }

            var counted = cell!.LimitTimeline.Where(t => t.Seconds >= warmup.TotalSeconds).Select(t => t.Limit).ToArray();
            Line($"{ServerOverloadRun.MarkdownRow(cell)} below {capacity}: {counted.Count(l => l < capacity) * 100.0 / counted.Length:0}% of samples, at {capacity}: {counted.Count(l => l == capacity) * 100.0 / counted.Length:0}%; limit every 0.1 s: {string.Join(' ', counted)}; load average {File.ReadAllText("/proc/loadavg").Split(' ')[0]}");
        }
    }
}

if (which == "compose")
{
    // A FanOut client on a FanOut server: a fan-out calls a service that admits with AddFanOutConcurrency() (its refusals
    // carry Retry-After: 1) in front of the simulated dependency; the client's default adaptive limit against Fixed(POOL),
    // alternating in rounds, each time-boxed and judged over its second half (docs/server.md, rule 6 of docs/adaptive.md).
    var rounds = args.Length > 3 ? int.Parse(args[3], CultureInfo.InvariantCulture) : 3;
    await using var backend = new SimulatedBackend(capacity, serviceTime);
    Line($"A fan-out on a FanOut.AspNetCore service over {backend.Describe}; {measured.TotalSeconds:0} s judged after {warmup.TotalSeconds:0} s; FANOUT_LEAVE_OUT={Environment.GetEnvironmentVariable("FANOUT_LEAVE_OUT") ?? "none"}");
    Line("");
    Line("| round | client | ok/s | x Fixed | refused by the service | the client's limit at the end |");
    Line("|---:|---|---:|---:|---:|---:|");
    for (var round = 0; round < rounds; round++)
    {
        var fixedCell = await ComposeAsync(ConcurrencyLimit.Fixed(capacity));
        var adaptiveCell = await ComposeAsync(ConcurrencyLimit.Adaptive());
        Line(string.Create(CultureInfo.InvariantCulture, $"| {round} | Fixed({capacity}) | {fixedCell.Rate:F0} | 1.00x | {fixedCell.Refused:P1} | {capacity} |"));
        Line(string.Create(CultureInfo.InvariantCulture, $"| {round} | default (adaptive) | {adaptiveCell.Rate:F0} | **{adaptiveCell.Rate / fixedCell.Rate:F2}x** | {adaptiveCell.Refused:P1} | {adaptiveCell.Limit} |"));
    }

    async Task<(double Rate, double Refused, int Limit)> ComposeAsync(ConcurrencyLimit limit)
    {
        // A fresh service per run, so the service's own limit starts where a deployment's does.
        await using var app = await OverloadApp.StartAsync(OverloadRow.FanOutAdaptive, backend);
        using var http = new HttpClient();
        long ok = 0, calls = 0, refused = 0;
        var clock = System.Diagnostics.Stopwatch.StartNew();
        using var end = new CancellationTokenSource(warmup + measured);
        try
        {
            await Enumerable.Range(0, int.MaxValue).FanOutAsync(
                async (_, ct) =>
                {
                    using var response = await http.GetAsync(app.WorkUrl, ct);
                    var judged = clock.Elapsed >= warmup;
                    Interlocked.Add(ref calls, judged ? 1 : 0);
                    if ((int)response.StatusCode is 429 or 503)
                    {
                        Interlocked.Add(ref refused, judged ? 1 : 0);
                        if (limit.Kind == "adaptive")
                        {
                            throw new OverloadedException($"{(int)response.StatusCode}", response.Headers.RetryAfter?.Delta); // backs off, the item runs again
                        }

                        return; // a fixed limit runs no item again: the refused call is counted, and the next item goes
                    }

                    response.EnsureSuccessStatusCode();
                    Interlocked.Add(ref ok, judged ? 1 : 0);
                },
                new FanOutOptions { Limit = limit, OverloadRetries = 100 },
                end.Token);
        }
        catch (OperationCanceledException) when (end.IsCancellationRequested)
        {
            // the time box
        }

        return (ok / measured.TotalSeconds, (double)refused / Math.Max(1, calls), limit.Current);
    }
}

if (which == "sweep")
{
    // The lab scenario's sweep (one app per row, 0.5x, 1x, 2x, 4x in order, the limit carried over), repeated in rounds that
    // alternate the rows, so every row meets the same machine load; medians and spread per row and load.
    var rounds = args.Length > 3 ? int.Parse(args[3], CultureInfo.InvariantCulture) : 5;
    await using var server = !cpu && PostgresServer.WhyNot() is null ? await PostgresServer.StartAsync() : null;
    await using IOverloadBackend backend = cpu ? new CpuBackend(serviceTime) : server is null ? new SimulatedBackend(capacity, serviceTime) : new PostgresBackend(server, capacity, serviceTime);
    if (backend is PostgresBackend postgres)
    {
        await postgres.WarmAsync();
    }

    double[] loads = [0.5, 1, 2, 4];
    OverloadRow[] rows = [OverloadRow.NoLimiter, OverloadRow.AspNetConcurrency(capacity, "hand-tuned"), OverloadRow.FanOutAdaptive, OverloadRow.FanOutPriorities];
    if (args.Length > 4)
    {
        // A fifth argument keeps only the rows whose name contains it (e.g. "priorities"), for a quick look after a change;
        // it also reaches the alternatives to the package's choices ("priorities" adds the row without the reserve and one
        // per reserve a sixth argument lists, e.g. "0.1,fixed4"; "adaptive" also a start at 16), so they alternate in one process.
        rows = [.. rows, OverloadRow.FanOutPrioritiesNoReserve, OverloadRow.FanOutAdaptiveStart16];
        if (args.Length > 5)
        {
            // "0.1" a reserve, "fixed4" the admission on a fixed limit of 4.
            // "qpp0.1" both FanOut rows with that QueuePerPermit; "shed0.5" the priorities
            // row with that SheddableWaitPerServiceTime; "unwatched" both FanOut rows with WatchThreadPoolLag off.
            rows = [.. rows, .. args[5].Split(',').SelectMany(r => r.StartsWith("fixed", StringComparison.Ordinal)
                ? [OverloadRow.FanOutPrioritiesFixed(int.Parse(r[5..], CultureInfo.InvariantCulture))]
                : r.StartsWith("qpp", StringComparison.Ordinal)
                ? [OverloadRow.FanOutAdaptive with { Name = $"FanOut adaptive, QueuePerPermit {r[3..]}", QueuePerPermit = double.Parse(r[3..], CultureInfo.InvariantCulture) }, OverloadRow.FanOutPriorities with { Name = $"FanOut adaptive + priorities (20% critical), QueuePerPermit {r[3..]}", QueuePerPermit = double.Parse(r[3..], CultureInfo.InvariantCulture) }]
                : r == "unwatched"
                ? [OverloadRow.FanOutAdaptive with { Name = "FanOut adaptive, thread-pool lag unwatched", WatchThreadPoolLag = false }, OverloadRow.FanOutPriorities with { Name = "FanOut adaptive + priorities (20% critical), thread-pool lag unwatched", WatchThreadPoolLag = false }]
                : r.StartsWith("shed", StringComparison.Ordinal)
                ? [OverloadRow.FanOutPrioritiesSheddableWait(double.Parse(r[4..], CultureInfo.InvariantCulture))]
                : new[] { OverloadRow.FanOutPrioritiesReserve(double.Parse(r, CultureInfo.InvariantCulture)) })];
        }

        // Several filters separated by '|' keep a row that matches any; one starting with '=' matches a whole name only.
        var filters = args[4].Split('|');
        rows = rows.Where(r => filters.Any(f => f.StartsWith('=') ? r.Name.Equals(f[1..], StringComparison.OrdinalIgnoreCase) : r.Name.Contains(f, StringComparison.OrdinalIgnoreCase))).ToArray();
    }

    var cells = new List<OverloadCell>();
    for (var round = 0; round < rounds; round++)
    {
        foreach (var row in rows)
        {
            await using var app = await OverloadApp.StartAsync(row, backend);
            foreach (var load in loads)
            {
                // No limiter only at 0.5x (the uncontended p99); above it its queue takes the run's time.
                if (row.Kind == OverloadRowKind.NoLimiter && load > 0.5)
                {
                    continue;
                }

                var cell = await ServerOverloadRun.RunLoadAsync(row, app, load * backend.CapacityPerSecond, load, warmup, measured, slo);
                cells.Add(cell);
                Console.WriteLine($"  round {round + 1}: {ServerOverloadRun.MarkdownRow(cell)} p99 critical/others {cell.CriticalP99Ms:0}/{cell.OtherP99Ms:0} load average {File.ReadAllText("/proc/loadavg").Split(' ')[0]}");
            }
        }
    }

    Line($"## sweep: {backend.Describe}, {rounds} rounds, {warmup.TotalSeconds:0.##} s warm-up + {measured.TotalSeconds:0.##} s measured per load; median (min-max)");
    Line("");
    Line("| row | load | goodput/s | p50 ms | p99 ms | p99 critical / others ms | refused | critical ok | mean limit |");
    Line("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    foreach (var group in cells.GroupBy(c => (c.Row, c.LoadFactor)))
    {
        static string Spread(IEnumerable<double> values, string format, double scale = 1)
        {
            var sorted = values.Select(v => v * scale).Order().ToArray();
            var median = sorted.Length % 2 == 1 ? sorted[sorted.Length / 2] : (sorted[(sorted.Length / 2) - 1] + sorted[sorted.Length / 2]) / 2;
            return string.Create(CultureInfo.InvariantCulture, $"{median.ToString(format, CultureInfo.InvariantCulture)} ({sorted[0].ToString(format, CultureInfo.InvariantCulture)}-{sorted[^1].ToString(format, CultureInfo.InvariantCulture)})");
        }

        var g = group.ToArray();
        static double Ms(double ms) => double.IsNaN(ms) ? 0 : ms;
        Line($"| {group.Key.Row} | {group.Key.LoadFactor:0.#}x | {Spread(g.Select(c => c.GoodputPerSecond), "0.0")} | {Spread(g.Select(c => Ms(c.P50Ms)), "0")} | {Spread(g.Select(c => Ms(c.P99Ms)), "0")} | {Spread(g.Select(c => Ms(c.CriticalP99Ms)), "0")} / {Spread(g.Select(c => Ms(c.OtherP99Ms)), "0")} | {Spread(g.Select(c => c.RefusedShare), "0", 100)} % | {Spread(g.Select(c => c.CriticalSuccess), "0.0", 100)} % | {Spread(g.Select(c => c.MeanLimit), "0.0")} |");
    }
}

if (which is "simulated" or "all")
{
    await using var backend = new SimulatedBackend(capacity, serviceTime);
    await RunTableAsync(backend);
}

if (which is "postgres" or "all")
{
    if (PostgresServer.WhyNot() is { } reason)
    {
        Console.WriteLine($"PostgreSQL table skipped: {reason}");
    }
    else
    {
        await using var server = await PostgresServer.StartAsync();
        await using var backend = new PostgresBackend(server, capacity, serviceTime);
        await backend.WarmAsync();
        await RunTableAsync(backend);
    }
}

var results = Path.Combine(AppContext.BaseDirectory, "server-overload.md");
await File.WriteAllTextAsync(results, output.ToString());
Console.WriteLine($"written to {results}");
return 0;

async Task RunTableAsync(IOverloadBackend backend)
{
    Line($"## {backend.Describe}: capacity {backend.CapacityPerSecond:0}/s, SLO {slo.TotalMilliseconds:0} ms, client timeout {ServerOverloadRun.ClientTimeout.TotalSeconds:0} s, {Environment.ProcessorCount} cores");
    Line("");

    // The hand-tuned ConcurrencyLimiter: the permit count (queue = permits) with the most goodput at 2x, found by trying.
    var tried = new List<(int Permits, OverloadCell Cell)>();
    foreach (var permits in new[] { 2, 4, 6, 8 })
    {
        var cell = await ServerOverloadRun.RunAsync(OverloadRow.AspNetConcurrency(permits, "trial"), backend, 2, warmup, measured, slo);
        tried.Add((permits, cell));
        Console.WriteLine($"  trial: {permits} permits at 2x: goodput {cell.GoodputPerSecond:0.0}/s, p99 {cell.P99Ms:0} ms");
    }

    var best = tried.MaxBy(t => t.Cell.GoodputPerSecond).Permits;
    Line($"Hand-tuning (2x load): {string.Join(", ", tried.Select(t => $"{t.Permits} permits {t.Cell.GoodputPerSecond:0.0}/s"))}; best {best}.");
    Line("");
    Line(ServerOverloadRun.MarkdownHeader);
    OverloadRow[] rows =
    [
        OverloadRow.NoLimiter,
        OverloadRow.AspNetConcurrency(best, "hand-tuned"),
        OverloadRow.AspNetConcurrency(best * 8, "mistuned, 8x"),
        OverloadRow.FanOutAdaptive,
        OverloadRow.FanOutPriorities,
    ];
    foreach (var row in rows)
    {
        foreach (var load in new[] { 0.5, 1, 2, 4 })
        {
            var cell = await ServerOverloadRun.RunAsync(row, backend, load, warmup, measured, slo);
            Line(ServerOverloadRun.MarkdownRow(cell));
        }
    }

    Line("");
}

void Line(string text)
{
    Console.WriteLine(text);
    output.AppendLine(text);
}
