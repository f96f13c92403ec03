using System.Globalization;

using FanOut.Redis;
using FanOut.Redis.FleetWorker;
using FanOut.Tests.Limits.Simulation;

using StackExchange.Redis;

namespace FanOut.Benchmarks.Fleet;

/// <summary>
/// <c>fleet-incidents [--processes P] [--rounds R] [--initial B] [--scenarios first-contact,halves,long-low,storm,heavy-tail]</c>: issue 29's
/// simulation-suite scenarios (tests/FanOut.Tests/Limits/Simulation, the same scripts and targets) against the Redis fleet
/// budget: P limits with the adaptive budget's defaults, each on its own connection as P processes would be, share one key
/// on a private redis-server and one in-process downstream (<see cref="RealTimeDownstream"/>), in real time. Prints each
/// scenario's figures against its target; exit code 1 when one is missed.
/// </summary>
/// <remarks>
/// Real time because the fleet cannot run on the suite's fake clock: the budget and lease scripts take the time from Redis
/// (<c>TIME</c>), and nothing tells a driver when the limits' background round trips have settled before it moves a fake
/// clock on (docs/adaptive.md, "Open"). So the figures carry the machine's noise; the load average is printed with them.
/// </remarks>
public static class FleetIncidentsCommand
{
    private static readonly string[] s_scenarios = ["first-contact", "halves", "long-low", "storm", "heavy-tail"];
    private static readonly TimeSpan s_latency = TimeSpan.FromMilliseconds(20);

    public static async Task<int> RunAsync(string[] args, TextWriter output)
    {
        int processes = 3, rounds = 3, initial = new AdaptiveBudgetOptions().InitialBudget;
        var scenarios = s_scenarios;
        if (!await OptionReader.TryReadAsync("fleet-incidents", args, output, option =>
        {
            switch (option.Current)
            {
                case "--processes": processes = option.Number(1); break;
                case "--rounds": rounds = option.Number(1); break;
                case "--initial": initial = option.Number(1); break;
                case "--scenarios" when option.HasValue:
                    scenarios = option.Value().Split(',');
                    if (scenarios.FirstOrDefault(s => !s_scenarios.Contains(s)) is { } unknown)
                    {
                        throw new FormatException($"unknown scenario '{unknown}': choose from {string.Join(", ", s_scenarios)}");
                    }

                    break;
                default: throw new FormatException($"unknown option '{option.Current}': choose from --processes, --rounds, --initial, --scenarios");
            }
        }))
        {
            return 2;
        }

        if (!LocalRedisServer.IsInstalled)
        {
            await output.WriteLineAsync("fleet-incidents: redis-server is not installed (Debian: apt-get install -y redis-server)");
            return 3;
        }

        await using var redis = await LocalRedisServer.StartAsync();
        using var admin = await ConnectionMultiplexer.ConnectAsync(redis.Endpoint);
        var fleet = new Fleet(redis.Endpoint, admin, processes, new AdaptiveBudgetOptions { InitialBudget = initial });
        await output.WriteLineAsync($"fleet-incidents: {processes} limits sharing one adaptive budget (InitialBudget {initial}, the other options their defaults), {Environment.ProcessorCount} cores, load average {HostLoad.Averages()}");
        var missed = 0;
        foreach (var scenario in scenarios)
        {
            var lines = scenario switch
            {
                "first-contact" => await FirstContactAsync(fleet),
                "halves" => [await HalvesAsync(fleet)],
                "long-low" => [await LongLowAsync(fleet)],
                "storm" => [await StormAsync(fleet)],
                _ => [await HeavyTailAsync(fleet, rounds)],
            };
            foreach (var (text, within) in lines)
            {
                missed += within ? 0 : 1;
                await output.WriteLineAsync($"  {(within ? "within" : "MISSED")}  {text}");
            }
        }

        await output.WriteLineAsync($"fleet-incidents: {missed} target(s) missed; load average {HostLoad.Averages()}");
        return missed == 0 ? 0 : 1;
    }

    private static DownstreamState HardCap(int capacity) => new() { Capacity = capacity, Queue = 0, Latency = s_latency };

    private static async Task<(string, bool)[]> FirstContactAsync(Fleet fleet)
    {
        var lines = new List<(string, bool)>();
        foreach (var (capacity, items, maxShare) in new[] { (5, 100, 0.10), (20, 300, 0.05), (64, 1000, 0.05) })
        {
            var run = await fleet.RunAsync(DownstreamScript.Constant(HardCap(capacity)), items);
            var share = (double)run.Rejected / run.Calls.Count;
            lines.Add((Text($"first contact, hard cap {capacity}, {items} items: {run.Rejected} of {run.Calls.Count} calls rejected ({share:P1}; target <= {maxShare:P0}), {run.Succeeded} ok, {run.Failed} failed, peak budget {run.Peak}"),
                run.Succeeded == items && share <= maxShare));
        }

        return [.. lines];
    }

    private static async Task<(string, bool)> HalvesAsync(Fleet fleet)
    {
        TimeSpan halved = TimeSpan.FromSeconds(3), recovered = TimeSpan.FromSeconds(6);
        var run = await fleet.RunAsync(DownstreamScript.Phases((TimeSpan.Zero, HardCap(64)), (halved, HardCap(32)), (recovered, HardCap(64))), duration: TimeSpan.FromSeconds(9));
        var settled = run.SettledFrom(halved, recovered, 0.75 * 32, 1.25 * 32);
        var after = run.Calls.Where(c => c.At >= settled && c.At < recovered).ToArray();
        var rejectedAfter = after.Count(c => c.Rejected);
        var back = run.FirstAt(recovered, s => s.Limit >= 0.75 * 64);
        var within = settled - halved <= TimeSpan.FromSeconds(1) && rejectedAfter <= 0.03 * after.Length && back - recovered <= TimeSpan.FromSeconds(3);
        return (Text($"capacity 64 -> 32 at 3 s -> 64 at 6 s: settled within +-25% of 32 {Seconds(settled - halved)} after (target <= 1 s), {rejectedAfter} of {after.Length} calls rejected after settling (target <= 3%), back to 48 {Seconds(back - recovered)} after the recovery (target <= 3 s); {run.Timeline(halved - TimeSpan.FromSeconds(0.5), recovered + TimeSpan.FromSeconds(1))}"), within);
    }

    private static async Task<(string, bool)> LongLowAsync(Fleet fleet)
    {
        TimeSpan low = TimeSpan.FromSeconds(2), recovered = TimeSpan.FromSeconds(22);
        var run = await fleet.RunAsync(DownstreamScript.Phases((TimeSpan.Zero, HardCap(64)), (low, HardCap(4)), (recovered, HardCap(64))), duration: TimeSpan.FromSeconds(26));
        var back = run.FirstAt(recovered, s => s.Limit >= 32);
        var lowCalls = run.Calls.Where(c => c.At >= low + TimeSpan.FromSeconds(1) && c.At < recovered).ToArray();
        return (Text($"20 s at capacity 4, then 64: back to 32 {Seconds(back - recovered)} after (target <= 3 s); {lowCalls.Count(c => c.Rejected)} of {lowCalls.Length} calls rejected during the low; {run.Timeline(recovered - TimeSpan.FromSeconds(0.5), recovered + TimeSpan.FromSeconds(3))}"),
            back - recovered <= TimeSpan.FromSeconds(3));
    }

    private static async Task<(string, bool)> StormAsync(Fleet fleet)
    {
        TimeSpan storm = TimeSpan.FromSeconds(2), calm = TimeSpan.FromSeconds(3);
        var script = DownstreamScript.Phases((TimeSpan.Zero, HardCap(64)), (storm, HardCap(64) with { RetryAfter = TimeSpan.FromSeconds(1) }), (calm, HardCap(64)));
        var run = await fleet.RunAsync(script, duration: TimeSpan.FromSeconds(6));
        var before = run.Samples.LastOrDefault(s => s.At < storm).Limit;
        var during = run.Calls.Count(c => c.At >= storm && c.At < calm);
        var resumed = run.Samples.FirstOrDefault(s => s.At >= calm && s.Limit > 0);
        var within = run.Failed == 0 && during <= (1.25 * before) + 8 && resumed.At - calm <= TimeSpan.FromMilliseconds(50) && resumed.Limit >= 0.75 * before;
        return (Text($"Retry-After 1 s storm at 2 s: {run.Failed} items failed (target 0), {during} calls during the pause (budget {before} before; target <= {(1.25 * before) + 8:F0}), resumed at {resumed.Limit} {(resumed.At - calm).TotalMilliseconds:F0} ms after its end (target >= {0.75 * before:F0} within 50 ms); {run.Timeline(storm - TimeSpan.FromSeconds(0.25), calm + TimeSpan.FromSeconds(1))}"), within);
    }

    private static async Task<(string, bool)> HeavyTailAsync(Fleet fleet, int rounds)
    {
        const int Items = 20_000;
        var script = DownstreamScript.Constant(new DownstreamState { Capacity = 100_000, Queue = 0, Latency = s_latency, Shape = LatencyShape.HeavyTail });
        var ratios = new List<double>();
        var details = new List<string>();
        for (var round = 0; round < rounds; round++)
        {
            // Alternating rounds, a fixed fleet budget of 256 first: the same machinery, only the law differs.
            var best = await fleet.RunAsync(script, Items, fixedBudget: 256);
            var adaptive = await fleet.RunAsync(script, Items);
            ratios.Add(best.Elapsed / adaptive.Elapsed);
            details.Add(Text($"{best.Elapsed.TotalMilliseconds:F0} / {adaptive.Elapsed.TotalMilliseconds:F0} ms (peak budget {adaptive.Peak})"));
        }

        var median = ratios.Order().ElementAt(ratios.Count / 2);
        return (Text($"heavy tail (p99 = 10 x the median), {Items:N0} items: {median:F2}x a fixed fleet budget of 256's throughput, median of {rounds} alternating rounds (target >= 0.8x); Budget 256 / adaptive: {string.Join(", ", details)}"), median >= 0.8);
    }

    private static string Seconds(TimeSpan span) => span > TimeSpan.FromDays(1) ? "never" : string.Create(CultureInfo.InvariantCulture, $"{span.TotalSeconds:F2} s");

    private static string Text(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);

    /// <summary>P limits sharing a fresh key per run, on a private redis-server.</summary>
    private sealed class Fleet(string endpoint, IConnectionMultiplexer admin, int processes, AdaptiveBudgetOptions adaptive)
    {
        public async Task<FleetRun> RunAsync(DownstreamScript script, int items = int.MaxValue, TimeSpan? duration = null, int? fixedBudget = null)
        {
            var key = $"incidents-{Guid.NewGuid():N}";

            // A private server started here: no process can hold a lease of this key from an earlier life of the server, so
            // the key's epoch is created first and the fleet pays no restart grace (docs/redis-limit.md, "Redis restarted").
            await admin.GetDatabase().StringSetAsync($"fanout:{{{key}}}:epoch", "bench");
            var options = fixedBudget is { } budget ? new RedisLimitOptions { Key = key, Budget = budget } : new RedisLimitOptions { Key = key, Adaptive = adaptive };
            var limits = new RedisConcurrencyLimit[processes];
            try
            {
                for (var p = 0; p < processes; p++)
                {
                    limits[p] = await RedisConcurrencyLimit.ConnectAsync(endpoint, options);
                }

                var downstream = new RealTimeDownstream(script);
                var run = new FleetRun(downstream);
                using var sampling = new CancellationTokenSource();
                var sampler = run.SampleAsync(limits, sampling.Token);
                await Task.WhenAll(limits.Select((limit, p) => run.ProcessAsync(limit, items == int.MaxValue ? items : (items / processes) + (p < items % processes ? 1 : 0), duration)));
                run.End(limits[0].Peak);
                await sampling.CancelAsync();
                await sampler;
                return run;
            }
            finally
            {
                foreach (var limit in limits.Where(l => l is not null))
                {
                    await limit.DisposeAsync();
                }
            }
        }
    }

    /// <summary>One point of a run's timeline: the fleet budget as the first limit sees it (0 while the fleet is paused), the permits held by all, the capacity.</summary>
    private readonly record struct Sample(TimeSpan At, int Limit, int InFlight, int Capacity);

    /// <summary>What one scenario run saw: the downstream's calls, the items' outcomes and the timeline.</summary>
    private sealed class FleetRun(RealTimeDownstream downstream)
    {
        private readonly List<Sample> _samples = [];
        private long _succeeded;
        private long _failed;

        public IReadOnlyList<Sample> Samples => _samples;

        public IReadOnlyCollection<(TimeSpan At, bool Rejected)> Calls => downstream.Calls;

        public int Rejected => downstream.Calls.Count(c => c.Rejected);

        public long Succeeded => Interlocked.Read(ref _succeeded);

        public long Failed => Interlocked.Read(ref _failed);

        public TimeSpan Elapsed { get; private set; }

        public int Peak { get; private set; }

        /// <summary>One process: a fan-out call of its items (or of items without end until <paramref name="duration"/>), each item a call of the downstream.</summary>
        public async Task ProcessAsync(RedisConcurrencyLimit limit, int items, TimeSpan? duration)
        {
            IEnumerable<int> Items()
            {
                for (var i = 0; i < items && (duration is null || downstream.Now < duration); i++)
                {
                    yield return i;
                }
            }

            try
            {
                await Items().FanOutAsync(
                    async (_, token) =>
                    {
                        await downstream.CallAsync(token);
                        Interlocked.Increment(ref _succeeded);
                    },
                    new FanOutOptions { Limit = limit, Errors = ErrorMode.RunAll });
            }
            catch (FanOutException e)
            {
                Interlocked.Add(ref _failed, e.FailureCount);
            }
        }

        public async Task SampleAsync(RedisConcurrencyLimit[] limits, CancellationToken stop)
        {
            using var timer = new PeriodicTimer(TimeSpan.FromMilliseconds(10)) /* the suite's sampling period */;
            try
            {
                do
                {
                    _samples.Add(new Sample(downstream.Now, limits[0].FleetPaused ? 0 : limits[0].Current, limits.Sum(l => l.InFlight), downstream.Capacity));
                }
                while (await timer.WaitForNextTickAsync(stop));
            }
            catch (OperationCanceledException)
            {
                // the run is over
            }
        }

        public void End(int peak)
        {
            Elapsed = downstream.Now;
            Peak = peak;
        }

        /// <summary>When the first sample at or after <paramref name="from"/> that <paramref name="holds"/> was taken; <see cref="TimeSpan.MaxValue"/> for none.</summary>
        public TimeSpan FirstAt(TimeSpan from, Func<Sample, bool> holds) =>
            _samples.Where(s => s.At >= from && holds(s)).Select(s => s.At).DefaultIfEmpty(TimeSpan.MaxValue).First();

        /// <summary>The first time from which every sample until <paramref name="until"/> has its limit within <paramref name="low"/>..<paramref name="high"/>.</summary>
        public TimeSpan SettledFrom(TimeSpan from, TimeSpan until, double low, double high)
        {
            TimeSpan? settled = null;
            foreach (var sample in _samples.Where(s => s.At >= from && s.At < until))
            {
                settled = sample.Limit >= low && sample.Limit <= high ? settled ?? sample.At : null;
            }

            return settled ?? TimeSpan.MaxValue;
        }

        /// <summary>Budget/in flight/capacity every quarter of a second over a span.</summary>
        public string Timeline(TimeSpan from, TimeSpan until) =>
            string.Join(" ", Enumerable.Range(0, (int)((until - from).TotalSeconds / 0.25))
                .Select(i => _samples.FirstOrDefault(s => s.At >= from + TimeSpan.FromSeconds(i * 0.25)))
                .Where(s => s.At > TimeSpan.Zero)
                .Select(s => string.Create(CultureInfo.InvariantCulture, $"{s.At.TotalSeconds:F2}s:{s.Limit}/{s.InFlight}/{s.Capacity}")));
    }
}
