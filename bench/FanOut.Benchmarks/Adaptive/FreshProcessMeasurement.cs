using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Globalization;
using System.Net.Http.Json;
using System.Text.Json;

using FanOut.Diagnostics;

using Microsoft.Extensions.DependencyInjection;

namespace FanOut.Benchmarks.Adaptive;

/// <summary>
/// Issue 29's first-contact figures, each case in a fresh process (a cold JIT, a cold thread pool, a cold HTTP stack: what a
/// user's first call meets). <c>fresh waits [rounds] [shape]</c>: pure waits (<c>Task.Delay</c> bodies) with no limit against
/// <c>Fixed(256)</c>, one child process per run, the two alternating over the rounds; medians, their ratio, and how many
/// runs of the default took more than 4x Fixed(256)'s median (issue 29's bar) or more than twice its own median (a stall
/// that cost the rest of the run); <c>shape</c> (<c>500x20</c>, <c>100x100</c>,
/// <c>2000x1</c>) runs that shape only. <c>fresh waits-in-process [rounds] [shape]</c>: the same rounds in this one process (a
/// fresh limit per run, a warm JIT and thread pool), where a loaded machine's stalls meet the limit mid-run rather than
/// before its first answer.
/// <c>fresh http --fanout PATH [rounds] [capacities]</c>: against <c>fanout serve --capacity N --queue 0</c> (started from PATH, the
/// built FanOut.Cli), with no limit given and through <c>AddFanOutLimit()</c>, the share of requests the server answered
/// 429 (its <c>/stats</c>), one child process per run; <c>capacities</c> (<c>3,8,32</c>) replaces the issue's 5, 20 and 64. A child is this program run as <c>fresh-case ...</c>;
/// <c>FANOUT_TRACE_LIMIT=1</c> makes it print the limit's changes (time, value) to stderr.
/// </summary>
public static class FreshProcessMeasurement
{
    /// <summary>Rounds when none are asked for.</summary>
    public const int DefaultRounds = 5;

    private static readonly (string Name, int Items, int DelayMs)[] s_waits = [("500 x 20 ms", 500, 20), ("100 x 100 ms", 100, 100), ("2000 x 1 ms", 2000, 1)];

    private static readonly (int Capacity, int Items, double Target)[] s_http = [(5, 100, 0.10), (20, 300, 0.05), (64, 1000, 0.05)];

    /// <summary>Runs <c>fresh waits|http ...</c> (parent) or <c>fresh-case ...</c> (child).</summary>
    public static async Task<int> RunAsync(string[] args, TextWriter output)
    {
        switch (args)
        {
            case ["fresh-case", "wait", var mode, var items, var delay]:
                return await WaitCaseAsync(mode, Int(items), Int(delay), output);
            case ["fresh-case", "http", var mode, var url, var items]:
                return await HttpCaseAsync(mode, url, Int(items), output);
            case ["fresh", "waits", ..]:
                return await WaitsAsync(args.Length > 2 ? Int(args[2]) : DefaultRounds, args.Length > 3 ? args[3] : null, inProcess: false, output);
            case ["fresh", "waits-in-process", ..]:
                return await WaitsAsync(args.Length > 2 ? Int(args[2]) : DefaultRounds, args.Length > 3 ? args[3] : null, inProcess: true, output);
            case ["fresh", "http", "--fanout", var cli, ..]:
                return await HttpAsync(cli, args.Length > 4 ? Int(args[4]) : DefaultRounds, args.Length > 5 ? Capacities(args[5]) : s_http, output);
            default:
                Console.Error.WriteLine($"fresh: unknown arguments '{string.Join(' ', args)}': use 'fresh waits|waits-in-process [rounds] [500x20|100x100|2000x1]' or 'fresh http --fanout PATH-TO-fanout [rounds] [capacities, e.g. 3,8,32]'.");
                return 2;
        }
    }

    private static async Task<int> WaitsAsync(int rounds, string? only, bool inProcess, TextWriter output)
    {
        var shapes = s_waits.Where(w => only is null || only == Invariant($"{w.Items}x{w.DelayMs}")).ToArray();
        if (shapes.Length == 0)
        {
            Console.Error.WriteLine($"fresh waits: unknown shape '{only}': use one of {string.Join(", ", s_waits.Select(w => Invariant($"{w.Items}x{w.DelayMs}")))}.");
            return 2;
        }

        output.WriteLine($"pure waits, {(inProcess ? "one process, a fresh limit per run" : "one fresh process per run")}, {rounds} alternating rounds; load average at start {HostLoad.Averages()}");
        output.WriteLine("| shape | default ms (median) | Fixed(256) ms (median) | ratio | default runs above 4x | above 2x its median | default runs |");
        output.WriteLine("|---|---:|---:|---:|---:|---:|---|");
        foreach (var (name, items, delay) in shapes)
        {
            var adaptive = new List<double>();
            var fixedRuns = new List<double>();
            for (var round = 0; round < rounds; round++)
            {
                // Alternate which goes first, so a drift in load falls on both.
                foreach (var mode in round % 2 == 0 ? new[] { "default", "fixed" } : ["fixed", "default"])
                {
                    var printed = inProcess ? await InProcessAsync(mode, items, delay) : await RunChildAsync("fresh-case", "wait", mode, Str(items), Str(delay));
                    var ms = double.Parse(printed.Trim(), CultureInfo.InvariantCulture);
                    (mode == "default" ? adaptive : fixedRuns).Add(ms);
                }
            }

            var a = Median(adaptive);
            var f = Median(fixedRuns);
            var above = adaptive.Count(ms => ms > 4 * f);
            var slow = adaptive.Count(ms => ms > 2 * a);
            output.WriteLine(Invariant($"| {name} | {a:F0} | {f:F0} | {a / f:F2}x | {above} of {adaptive.Count} | {slow} | {string.Join(", ", adaptive.Select(x => x.ToString("F0", CultureInfo.InvariantCulture)))} |"));
        }

        output.WriteLine($"load average at end {HostLoad.Averages()}");
        return 0;
    }

    /// <summary>Runs one wait case in this process and returns what it printed.</summary>
    private static async Task<string> InProcessAsync(string mode, int items, int delayMs)
    {
        using var printed = new StringWriter(CultureInfo.InvariantCulture);
        await WaitCaseAsync(mode, items, delayMs, printed);
        return printed.ToString();
    }

    private static async Task<int> WaitCaseAsync(string mode, int items, int delayMs, TextWriter output)
    {
        using var trace = LimitTrace.StartIfAsked();
        var source = Enumerable.Range(0, items).ToArray();
        var sw = Stopwatch.StartNew();
        if (mode == "default")
        {
            await source.FanOutAsync((_, ct) => Task.Delay(delayMs, ct));
        }
        else
        {
            await source.FanOutAsync(256, (_, ct) => Task.Delay(delayMs, ct));
        }

        output.WriteLine(sw.Elapsed.TotalMilliseconds.ToString("F1", CultureInfo.InvariantCulture));
        return 0;
    }

    /// <summary>Capacities other than the issue's (<c>3,8,32</c>): 15 items per permit (at least 100), the issue's targets (10% at 5 or less, else 5%).</summary>
    private static (int Capacity, int Items, double Target)[] Capacities(string list) =>
        [.. list.Split(',').Select(Int).Select(c => (c, Math.Max(100, 15 * c), c <= 5 ? 0.10 : 0.05))];

    private static async Task<int> HttpAsync(string cli, int rounds, (int Capacity, int Items, double Target)[] cells, TextWriter output)
    {
        output.WriteLine($"first contact over HTTP, one fresh process per run, {rounds} rounds; load average at start {HostLoad.Averages()}");
        output.WriteLine("| capacity, items | target | loop: 429 share per run | http: 429 share per run | failed items |");
        output.WriteLine("|---|---:|---|---|---:|");
        foreach (var (capacity, items, target) in cells)
        {
            var shares = new Dictionary<string, List<double>> { ["loop"] = [], ["http"] = [] };
            var failed = 0;
            for (var round = 0; round < rounds; round++)
            {
                foreach (var mode in round % 2 == 0 ? new[] { "loop", "http" } : ["http", "loop"])
                {
                    // A fresh server per run too: its connections and counters start cold.
                    await using var server = await ServeProcess.StartAsync(cli, capacity);
                    var line = (await RunChildAsync("fresh-case", "http", mode, server.BaseAddress, Str(items))).Trim().Split(' ');
                    failed += Int(line[0]);
                    using var client = new HttpClient();
                    var stats = await client.GetFromJsonAsync<JsonElement>(server.BaseAddress + "stats");
                    var served = stats.GetProperty("requestsServed").GetDouble();
                    var rejected = stats.GetProperty("rejected429").GetDouble();
                    shares[mode].Add(rejected / (served + rejected));
                }
            }

            static string Runs(List<double> s) => string.Join(", ", s.Select(x => (100 * x).ToString("F1", CultureInfo.InvariantCulture) + "%"));
            output.WriteLine(Invariant($"| {capacity}, {items} | {target * 100:F0}% | {Runs(shares["loop"])} | {Runs(shares["http"])} | {failed} |"));
        }

        output.WriteLine($"load average at end {HostLoad.Averages()}");
        return 0;
    }

    private static async Task<int> HttpCaseAsync(string mode, string url, int items, TextWriter output)
    {
        using var trace = LimitTrace.StartIfAsked();
        var failed = 0;
        var started = Stopwatch.GetTimestamp();
        if (mode == "loop")
        {
            using var client = new HttpClient { BaseAddress = new Uri(url) };
            try
            {
                await Enumerable.Range(0, items).FanOutAsync(async (i, ct) =>
                {
                    using var response = await client.GetAsync($"item/{i}", ct);
                    response.EnsureSuccessStatusCode();
                });
            }
            catch (Exception ex)
            {
                failed = ex is AggregateException a ? a.InnerExceptions.Count : 1;
                Console.Error.WriteLine(ex.Message);
            }
        }
        else
        {
            var services = new ServiceCollection();
            services.AddHttpClient("d", c => c.BaseAddress = new Uri(url)).AddFanOutLimit();
            await using var provider = services.BuildServiceProvider();
            var client = provider.GetRequiredService<IHttpClientFactory>().CreateClient("d");
            var responses = await Task.WhenAll(Enumerable.Range(0, items).Select(async i =>
            {
                try
                {
                    using var response = await client.GetAsync($"item/{i}");
                    return response.IsSuccessStatusCode;
                }
                catch (HttpRequestException)
                {
                    return false;
                }
            }));
            failed = responses.Count(ok => !ok);
        }

        // Items failed, then the call's milliseconds (what first contact costs against an elastic server).
        output.WriteLine(Invariant($"{failed} {Stopwatch.GetElapsedTime(started).TotalMilliseconds:0}"));
        return 0;
    }

    /// <summary>Runs this program again with <paramref name="args"/> and returns what it printed; throws if it failed.</summary>
    private static async Task<string> RunChildAsync(params string[] args)
    {
        var start = new ProcessStartInfo { RedirectStandardOutput = true, UseShellExecute = false };
        var self = Environment.ProcessPath!;
        if (Path.GetFileNameWithoutExtension(self) == "dotnet")
        {
            start.ArgumentList.Add(typeof(FreshProcessMeasurement).Assembly.Location);
        }

        start.FileName = self;
        foreach (var arg in args)
        {
            start.ArgumentList.Add(arg);
        }

        using var child = Process.Start(start)!;
        var text = await child.StandardOutput.ReadToEndAsync();
        await child.WaitForExitAsync();
        return child.ExitCode == 0 ? text : throw new InvalidOperationException($"child '{string.Join(' ', args)}' exited {child.ExitCode}");
    }

    private static double Median(List<double> values)
    {
        var sorted = values.Order().ToArray();
        return sorted.Length % 2 == 1 ? sorted[sorted.Length / 2] : (sorted[(sorted.Length / 2) - 1] + sorted[sorted.Length / 2]) / 2;
    }

    private static int Int(string text) => int.Parse(text, CultureInfo.InvariantCulture);

    private static string Str(int value) => value.ToString(CultureInfo.InvariantCulture);

    private static string Invariant(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);

    /// <summary>Prints the adaptive limit's changes (ms since start, value) to stderr when FANOUT_TRACE_LIMIT=1.</summary>
    private sealed class LimitTrace : IDisposable
    {
        private readonly MeterListener _listener = new();
        private readonly Stopwatch _clock = Stopwatch.StartNew();

        private LimitTrace()
        {
            _listener.InstrumentPublished = (instrument, listener) =>
            {
                if (instrument.Meter.Name == FanOutInstruments.MeterName && instrument.Name == FanOutInstruments.LimitCurrent)
                {
                    listener.EnableMeasurementEvents(instrument);
                }
            };
            _listener.SetMeasurementEventCallback<int>((_, value, _, _) => Console.Error.Write(Invariant($"{_clock.Elapsed.TotalMilliseconds:F0}:{value} ")));
            _listener.Start();
        }

        public static LimitTrace? StartIfAsked() => Environment.GetEnvironmentVariable("FANOUT_TRACE_LIMIT") == "1" ? new LimitTrace() : null;

        public void Dispose()
        {
            _listener.Dispose();
            Console.Error.WriteLine();
        }
    }

    /// <summary>A <c>fanout serve</c> process on a free loopback port, stopped on dispose.</summary>
    private sealed class ServeProcess : IAsyncDisposable
    {
        private readonly Process _process;

        private ServeProcess(Process process, string baseAddress)
        {
            _process = process;
            BaseAddress = baseAddress;
        }

        public string BaseAddress { get; }

        public static async Task<ServeProcess> StartAsync(string cli, int capacity)
        {
            var start = new ProcessStartInfo(cli) { RedirectStandardOutput = true, UseShellExecute = false };
            foreach (var arg in new[] { "serve", "--capacity", Str(capacity), "--queue", "0", "--latency", "fixed:20" })
            {
                start.ArgumentList.Add(arg);
            }

            var process = Process.Start(start)!;
            while (await process.StandardOutput.ReadLineAsync() is { } line)
            {
                const string Prefix = "Downstream listening on ";
                if (line.StartsWith(Prefix, StringComparison.Ordinal))
                {
                    var address = line[Prefix.Length..].Trim();
                    _ = process.StandardOutput.ReadToEndAsync();
                    return new ServeProcess(process, address.EndsWith('/') ? address : address + "/");
                }
            }

            throw new InvalidOperationException($"'{cli} serve' exited before listening");
        }

        public async ValueTask DisposeAsync()
        {
            _process.Kill(entireProcessTree: true);
            await _process.WaitForExitAsync();
            _process.Dispose();
        }
    }
}
