using System.Globalization;
using System.Text;

using FanOut.Lab.ServerOverload;

// dotnet run -c Release --project bench/FanOut.ServerOverload -- [simulated|postgres|all|timeline] [measured seconds] [warm-up seconds]
var which = args.Length > 0 ? args[0] : "all";
if (which is not ("simulated" or "postgres" or "all" or "timeline" or "queue" or "fanout"))
{
    Console.Error.WriteLine($"unknown backend '{which}': choose simulated, postgres, all, timeline, queue or fanout.");
    return 2;
}

var measured = TimeSpan.FromSeconds(args.Length > 1 ? double.Parse(args[1], CultureInfo.InvariantCulture) : 4);
var warmup = TimeSpan.FromSeconds(args.Length > 2 ? double.Parse(args[2], CultureInfo.InvariantCulture) : 1.5);
const int Capacity = 4;
var serviceTime = TimeSpan.FromMilliseconds(40);
var slo = TimeSpan.FromMilliseconds(200);
var output = new StringBuilder();

if (which == "timeline")
{
    // The adaptive limit over time at 2x and 4x on the simulated dependency (report.html's timeline, as text).
    await using var backend = new SimulatedBackend(Capacity, serviceTime);
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
    await using var backend = new PostgresBackend(server, Capacity, serviceTime);
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
    await using var backend = new PostgresBackend(server, Capacity, serviceTime);
    await backend.WarmAsync();
    Line(ServerOverloadRun.MarkdownHeader);
    foreach (var row in new[] { OverloadRow.FanOutAdaptive, OverloadRow.FanOutPriorities })
    {
        foreach (var load in new[] { 2.0, 4.0 })
        {
            Line(ServerOverloadRun.MarkdownRow(await ServerOverloadRun.RunAsync(row, backend, load, warmup, measured, slo)));
        }
    }
}

if (which is "simulated" or "all")
{
    await using var backend = new SimulatedBackend(Capacity, serviceTime);
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
        await using var backend = new PostgresBackend(server, Capacity, serviceTime);
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
