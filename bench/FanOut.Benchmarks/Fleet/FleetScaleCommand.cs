using System.Diagnostics;
using System.Globalization;
using System.Text.Json;

using FanOut.Redis.FleetWorker;

namespace FanOut.Benchmarks.Fleet;

/// <summary>
/// <c>fleet-scale [--workers N] [--budget B | --adaptive] [--items I] [--hold-ms MS | --url URL] [--rounds R]</c>: N worker
/// processes (FanOut.Redis.FleetWorker, started together once all are ready) share one Redis budget against a private
/// redis-server; prints the coordination cost per item: Redis round trips (the limits' <c>RoundTrips</c>) and microseconds
/// of permit wait (<c>fanout.redis.wait.duration</c>), summed over the workers and divided by the items they ran.
/// </summary>
public static class FleetScaleCommand
{
    public static async Task<int> RunAsync(string[] args, TextWriter output)
    {
        int workers = 16, budget = 48, items = 500, holdMs = 20, rounds = 1;
        var adaptive = false;
        string? url = null;
        if (!await OptionReader.TryReadAsync("fleet-scale", args, output, option =>
        {
            switch (option.Current)
            {
                case "--workers": workers = option.Number(1); break;
                case "--budget": budget = option.Number(1); break;
                case "--items": items = option.Number(1); break;
                case "--hold-ms": holdMs = option.Number(0); break;
                case "--rounds": rounds = option.Number(1); break;
                case "--adaptive": adaptive = true; break;
                case "--url" when option.HasValue: url = option.Value(); break;
                default: throw new FormatException($"unknown option '{option.Current}': choose from --workers, --budget, --adaptive, --items, --hold-ms, --url, --rounds");
            }
        }))
        {
            return 2;
        }

        await using var redis = await LocalRedisServer.StartAsync();
        var mode = adaptive ? "adaptive (default bounds)" : $"Budget = {budget}";
        var work = url is null ? $"{holdMs} ms hold per item" : $"GET {url}item/ID";
        await output.WriteLineAsync($"fleet-scale: {workers} processes x {items} items, {mode}, {work}");
        for (var round = 1; round <= rounds; round++)
        {
            var reports = await RunRoundAsync(redis.Endpoint, $"scale-{round}-{Guid.NewGuid():N}", workers, budget, adaptive, items, holdMs, url);
            var ran = reports.Sum(r => r.GetProperty("ok").GetInt64() + r.GetProperty("status429").GetInt64() + r.GetProperty("failed").GetInt64());
            var trips = reports.Sum(r => r.GetProperty("roundTrips").GetInt64());
            var waitMs = reports.Sum(r => r.GetProperty("permitWaitMs").GetDouble());
            var slowest = reports.Max(r => r.GetProperty("elapsedMs").GetDouble());
            var errors = reports.Select(r => r.GetProperty("error")).Where(e => e.ValueKind == JsonValueKind.String).Select(e => e.GetString()).ToList();
            await output.WriteLineAsync(string.Create(CultureInfo.InvariantCulture,
                $"  round {round}: {ran:N0} items ({reports.Sum(r => r.GetProperty("status429").GetInt64()):N0} x 429) in {slowest:N0} ms (slowest worker), {trips:N0} round trips = {(double)trips / ran:F3} per item, permit wait {waitMs * 1000 / ran:N0} us per item{(errors.Count > 0 ? "; errors: " + string.Join(" | ", errors) : string.Empty)}"));
        }

        return 0;
    }

    private static async Task<List<JsonElement>> RunRoundAsync(string endpoint, string key, int workers, int budget, bool adaptive, int items, int holdMs, string? url)
    {
        var arguments = new List<string> { "--redis", endpoint, "--key", key, "--budget", Text(budget), "--items", Text(items), "--hold-ms", Text(holdMs), "--wait-for-go" };
        if (adaptive)
        {
            arguments.Add("--adaptive");
        }

        if (url is not null)
        {
            arguments.AddRange(["--url", url]);
        }

        using var processes = FleetWorkerProcesses.Start(workers, arguments);
        await processes.WaitReadyAsync();
        await processes.SendAsync("go");
        return [.. (await processes.ReportsAsync("report ")).Select(line => JsonDocument.Parse(line["report ".Length..]).RootElement.Clone())];

        static string Text(int value) => value.ToString(CultureInfo.InvariantCulture);
    }
}
