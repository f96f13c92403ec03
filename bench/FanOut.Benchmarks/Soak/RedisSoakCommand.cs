using System.Globalization;

using FanOut.Redis.FleetWorker;
using FanOut.Redis.FleetWorker.Soak;

namespace FanOut.Benchmarks.Soak;

/// <summary>
/// <c>redis-soak --minutes N [--sentinel] [--replica-acks N] [--rate R] [--faults K,K] [--workers W] [--budget B] [--lease-ms L] [--fallback F] [--seed S]</c>: worker processes share
/// one Redis budget against a private redis-server while random faults are injected (pause 2 s, pause longer than a lease,
/// restart with data lost, a worker killed with SIGKILL, out of memory, a late joiner, a restart while a worker joins; with <c>--sentinel</c> a primary, a replica and three sentinels, and failovers); prints faults, items and violations. Exit code 1
/// on any violation, 2 on a usage error, 3 when redis-server is not installed.
/// </summary>
public static class RedisSoakCommand
{
    public static async Task<int> RunAsync(string[] args, TextWriter output)
    {
        var options = new FleetSoakOptions();
        for (var i = 1; i < args.Length; i++)
        {
            if (args[i] == "--sentinel")
            {
                options = options with { Sentinel = true };
                continue;
            }

            if (args[i] == "--faults" && i + 1 < args.Length)
            {
                var names = args[++i].Split(',');
                var kinds = Enum.GetValues<SoakFault>().Where(k => names.Contains(FleetSoakResult.Name(k))).ToArray();
                if (kinds.Length != names.Length)
                {
                    await output.WriteLineAsync($"redis-soak: --faults '{args[i]}': choose from {string.Join(", ", Enum.GetValues<SoakFault>().Select(FleetSoakResult.Name))}, comma-separated");
                    return 2;
                }

                options = options with { Kinds = kinds };
                continue;
            }

            var value = i + 1 < args.Length && double.TryParse(args[i + 1], NumberStyles.Float, CultureInfo.InvariantCulture, out var v) ? v : -1;
            switch (args[i])
            {
                case "--minutes" when value > 0:
                    options = options with { Duration = TimeSpan.FromMinutes(value) };
                    break;
                case "--workers" when value >= 2 && value == Math.Floor(value):
                    options = options with { Workers = (int)value };
                    break;
                case "--budget" when value >= 1 && value == Math.Floor(value):
                    options = options with { Budget = (int)value };
                    break;
                case "--lease-ms" when value >= 300 && value == Math.Floor(value):
                    options = options with { LeaseTime = TimeSpan.FromMilliseconds(value) };
                    break;
                case "--fallback" when value >= 0 && value == Math.Floor(value):
                    options = options with { FallbackLimit = (int)value };
                    break;
                case "--seed" when value >= 0 && value == Math.Floor(value):
                    options = options with { Seed = (int)value };
                    break;
                case "--rate" when value >= 0 && value == Math.Floor(value):
                    options = options with { Rate = (int)value };
                    break;
                case "--replica-acks" when value >= 0 && value <= 16 && value == Math.Floor(value):
                    options = options with { ReplicaAcknowledgements = (int)value };
                    break;
                default:
                    await output.WriteLineAsync($"redis-soak: unknown or bad argument '{args[i]}'; valid: --minutes N (> 0), --faults K,K (pause, long-pause, restart, kill, oom, join, restart-join), --workers W (>= 2), --budget B (>= 1), --lease-ms L (>= 300), --fallback F (>= 0; 0 = Fail), --seed S (>= 0), --sentinel (a primary, a replica and three sentinels; faults failover, kill-primary, kill, join, oom), --replica-acks N (0 to 16: WAIT after lease-granting scripts), --rate R (>= 0: item starts also take a fleet rate of R/s, checked by the referee)");
                    return 2;
            }

            i++;
        }

        if (!LocalRedisServer.IsInstalled || (options.Sentinel && !LocalSentinelGroup.IsInstalled))
        {
            await output.WriteLineAsync($"redis-soak: {(options.Sentinel ? "redis-server and redis-sentinel are" : "redis-server is")} not installed (Debian: {(options.Sentinel ? LocalSentinelGroup.InstallLine : "apt-get install -y redis-server")})");
            return 3;
        }

        var misplaced = options.FaultKinds.Where(k => !(options.Sentinel ? FleetSoakOptions.SentinelKinds : new FleetSoakOptions().FaultKinds).Contains(k)).ToList();
        if (misplaced.Count > 0)
        {
            await output.WriteLineAsync($"redis-soak: --faults {string.Join(',', misplaced.Select(FleetSoakResult.Name))} do not fit {(options.Sentinel ? "--sentinel" : "one redis-server")}: choose from {string.Join(", ", (options.Sentinel ? FleetSoakOptions.SentinelKinds : new FleetSoakOptions().FaultKinds).Select(FleetSoakResult.Name))}");
            return 2;
        }

        var policy = options.FallbackLimit == 0 ? "Fail" : $"FallBackToLocal({options.FallbackLimit})";
        await output.WriteLineAsync(string.Create(CultureInfo.InvariantCulture, $"redis-soak: {options.Duration.TotalMinutes} min, {options.Workers} workers, budget {options.Budget}, lease {options.LeaseTime.TotalMilliseconds} ms, {policy}, bound {options.Bound}, {(options.Sentinel ? $"sentinel, WAIT for {options.ReplicaAcknowledgements} replica(s)" : "one redis-server")}{(options.Rate > 0 ? $", fleet rate {options.Rate}/s" : string.Empty)}, seed {options.Seed}"));
        var result = await FleetSoak.RunAsync(options, output);
        await output.WriteLineAsync(result.ToString());
        foreach (var finding in result.Findings)
        {
            await output.WriteLineAsync("  VIOLATION " + finding);
        }

        return result.Violations == 0 ? 0 : 1;
    }
}
