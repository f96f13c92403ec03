using System.Diagnostics;
using System.Globalization;

using FanOut.Redis.FleetWorker;

using StackExchange.Redis;

namespace FanOut.Benchmarks.Fleet;

/// <summary>
/// <c>fleet-rate [--workers N] [--rate R] [--burst B] [--seconds S] [--acquirers A] [--faults restart,pause] [--fallback F]</c>:
/// N worker processes (FanOut.Redis.FleetWorker <c>--rate</c>) take permits from one <c>RedisRateLimiter</c> at a fleet rate
/// of R/s against a private redis-server, started together; prints the permits granted over the run against the server's
/// clock (<c>TIME</c> read before the start and after the stop), the rate, its distance from R, and the GCRA bound
/// (burst + R x seconds, and a burst more per restart: the rate's state is lost with Redis's data). With faults, every
/// 10 s a restart (0.5 s down, data lost) or a 500 ms <c>CLIENT PAUSE</c>, alternating.
/// </summary>
public static class FleetRateCommand
{
    public static async Task<int> RunAsync(string[] args, TextWriter output)
    {
        int workers = 4, rate = 200, burst = 10, seconds = 60, acquirers = 64, fallback = 0;
        var faults = Array.Empty<string>();
        if (!await OptionReader.TryReadAsync("fleet-rate", args, output, option =>
        {
            switch (option.Current)
            {
                case "--workers": workers = option.Number(1); break;
                case "--rate": rate = option.Number(1); break;
                case "--burst": burst = option.Number(1); break;
                case "--seconds": seconds = option.Number(1); break;
                case "--acquirers": acquirers = option.Number(1); break;
                case "--fallback": fallback = option.Number(0); break;
                case "--faults" when option.HasValue:
                    faults = option.Value().Split(',');
                    if (faults.Except(["restart", "pause"]).FirstOrDefault() is { } bad)
                    {
                        throw new FormatException($"--faults '{bad}': choose from restart, pause (comma-separated)");
                    }

                    break;
                default: throw new FormatException($"unknown option '{option.Current}': choose from --workers, --rate, --burst, --seconds, --acquirers, --faults, --fallback");
            }
        }))
        {
            return 2;
        }

        if (burst > rate)
        {
            await output.WriteLineAsync($"fleet-rate: --burst {burst} is above --rate {rate}: choose 1 to {rate}");
            return 2;
        }

        await using var server = await LocalRedisServer.StartAsync();
        var key = $"rate-{Guid.NewGuid():N}";
        await output.WriteLineAsync(string.Create(CultureInfo.InvariantCulture, $"fleet-rate: {workers} processes x {acquirers} acquirers, fleet rate {rate}/s, burst {burst}, {seconds} s, faults {(faults.Length == 0 ? "none" : string.Join(',', faults))}, {(fallback == 0 ? "Fail" : $"FallBackToLocal({fallback})")}"));
        using var processes = FleetWorkerProcesses.Start(workers, ["--redis", server.Endpoint, "--key", key, "--rate", Text(rate), "--burst", Text(burst), "--acquirers", Text(acquirers), "--fallback", Text(fallback)]);
        await processes.WaitReadyAsync();

        long start;
        {
            await using var admin = await Admin(server.Endpoint);
            start = await ServerMicroseconds(admin);
        }

        await processes.SendAsync("go");

        var clock = Stopwatch.StartNew();
        int restarts = 0, pauses = 0;
        while (clock.Elapsed < TimeSpan.FromSeconds(seconds))
        {
            var next = TimeSpan.FromSeconds(10 * (restarts + pauses + 1));
            var left = TimeSpan.FromSeconds(seconds) - clock.Elapsed;
            if (faults.Length == 0 || next >= TimeSpan.FromSeconds(seconds - 2))
            {
                await Task.Delay(left > TimeSpan.Zero ? left : TimeSpan.Zero);
                break;
            }

            await Task.Delay(next - clock.Elapsed > TimeSpan.Zero ? next - clock.Elapsed : TimeSpan.Zero);
            var fault = faults[(restarts + pauses) % faults.Length];
            if (fault == "restart")
            {
                await server.RestartAsync(TimeSpan.FromMilliseconds(500));
                restarts++;
            }
            else
            {
                await using var admin = await Admin(server.Endpoint);
                await admin.GetServer(server.Endpoint).ExecuteAsync("CLIENT", "PAUSE", "500", "ALL");
                await Task.Delay(500);
                pauses++;
            }
        }

        // The server's clock at the stop: a restart starts it again from the machine's clock, which TIME follows.
        long end;
        {
            await using var admin = await Admin(server.Endpoint);
            end = await ServerMicroseconds(admin);
        }

        await processes.SendAsync("stop");

        long granted = 0, failed = 0;
        foreach (var line in await processes.ReportsAsync("rate granted "))
        {
            var parts = line.Trim().Split(' ');
            granted += long.Parse(parts[2], CultureInfo.InvariantCulture);
            failed += long.Parse(parts[4], CultureInfo.InvariantCulture);
        }

        var elapsed = (end - start) / 1e6;
        var bound = (burst * (1 + restarts)) + (rate * elapsed);
        var measured = granted / elapsed;
        await output.WriteLineAsync(string.Create(CultureInfo.InvariantCulture,
            $"  {granted:N0} granted in {elapsed:F3} s of server time: {measured:F1}/s, {(measured - rate) / rate * 100:+0.00;-0.00} % from {rate}/s; bound {bound:F0} (burst x {1 + restarts} + rate x time): {(granted <= bound ? "held" : "EXCEEDED")}; faults: restart {restarts}, pause {pauses}; acquisitions failed {failed:N0}"));
        return granted <= bound ? 0 : 1;

        static string Text(int value) => value.ToString(CultureInfo.InvariantCulture);
    }

    private static Task<ConnectionMultiplexer> Admin(string endpoint) =>
        ConnectionMultiplexer.ConnectAsync(new ConfigurationOptions { EndPoints = { endpoint }, AllowAdmin = true, AbortOnConnectFail = false });

    private static async Task<long> ServerMicroseconds(ConnectionMultiplexer admin)
    {
        var time = (RedisResult[])(await admin.GetDatabase().ExecuteAsync("TIME"))!;
        return ((long)time[0] * 1_000_000) + (long)time[1];
    }
}
