using FanOut.Tests.Infrastructure;

namespace FanOut.Tests.Limits.Simulation;

/// <summary>
/// Issue 36's downstream shapes measured over <see cref="Seeds"/> seeds for one place's limit options: what
/// <see cref="LawShapeTests"/> and <see cref="LawAblationTests"/> assert. Every result is one figure per seed, in ascending order.
/// </summary>
internal static class ShapeMeasurement
{
    public const int Seeds = 20;

    /// <summary>A heavy tail without overload: 40 ms, p99 10x the median, room for everything.</summary>
    public static readonly DownstreamScript HeavyTail = DownstreamScript.Constant(new DownstreamState { Capacity = 100_000, Latency = TimeSpan.FromMilliseconds(40), Shape = LatencyShape.HeavyTail });

    /// <summary>Latency that rises smoothly past <paramref name="knee"/> calls in service (x (1 + (n / knee)^2): throughput peaks there), with the heavy tail's spread, no cap.</summary>
    public static DownstreamScript KneeBehindAHeavyTail(int knee) => DownstreamScript.Constant(new DownstreamState { Capacity = 100_000, SmoothKnee = knee, Shape = LatencyShape.HeavyTail });

    /// <summary>A downstream that slows down without overload: room for everything, its latency 20 -> 200 ms over the first 5 s, then steady.</summary>
    public static readonly DownstreamScript LatencyDrift = new(at => new DownstreamState { Capacity = 100_000, Latency = TimeSpan.FromMilliseconds(20 + (180 * Math.Min(1, at.TotalSeconds / 5))) });

    /// <summary>Calls sent before the first answer arrive this much later: connections opened, as over HTTP, so the first round is cold.</summary>
    public static readonly TimeSpan ColdStart = TimeSpan.FromMilliseconds(100);

    /// <summary>How long each run lasts, and where its second half (the part judged) begins.</summary>
    public static readonly TimeSpan Run = TimeSpan.FromSeconds(10), SecondHalf = TimeSpan.FromSeconds(5);

    /// <summary>Successes per second of the limit's run over Fixed(<paramref name="fixedLimit"/>)'s, from <paramref name="from"/> to <paramref name="to"/>; calls sent before the first answer take <paramref name="coldStart"/> to arrive (connections opened).</summary>
    public static double[] ThroughputRatios(AdaptiveLimitOptions options, int callSize, DownstreamScript script, int fixedLimit, TimeSpan from, TimeSpan to, TimeSpan coldStart = default) =>
        PerSeed(seed =>
        {
            var adaptive = new LimitSimulation(script, seed) { CallSize = callSize, ColdStart = coldStart };
            adaptive.Run(ConcurrencyLimit.Adaptive(adaptive.Options(options)), duration: to);
            var best = new LimitSimulation(script, seed) { CallSize = callSize, ColdStart = coldStart };
            best.Run(ConcurrencyLimit.Fixed(fixedLimit), duration: to);
            return Throughput(adaptive, from) / Throughput(best, from);
        });

    /// <summary>
    /// Per seed, successes per second over Fixed(<paramref name="capacity"/>)'s from <paramref name="from"/> to the run's end, and
    /// the percentage of calls refused, on a hard cap whose "no" takes <paramref name="rejectionTime"/> and holds its place in
    /// service meanwhile (a server whose "no" is work of its own); both ascending, each over its own seeds.
    /// </summary>
    public static (double[] Ratios, double[] Refused) RefusalsTakingAPlace(AdaptiveLimitOptions options, int callSize, int capacity, TimeSpan rejectionTime, TimeSpan from)
    {
        var script = DownstreamScript.Constant(IncidentScenarios.HardCap(capacity));
        var runs = Enumerable.Range(1, Seeds).Select(seed =>
        {
            var adaptive = new LimitSimulation(script, seed) { CallSize = callSize, RejectionTime = rejectionTime, RefusalsTakeAPlace = true };
            adaptive.Run(ConcurrencyLimit.Adaptive(adaptive.Options(options)), duration: Run);
            var best = new LimitSimulation(script, seed) { CallSize = callSize, RejectionTime = rejectionTime, RefusalsTakeAPlace = true };
            best.Run(ConcurrencyLimit.Fixed(capacity), duration: Run);
            return (Ratio: Throughput(adaptive, from) / Throughput(best, from), Refused: 100.0 * adaptive.Rejected / adaptive.Calls.Count);
        }).ToList();
        return (runs.Select(r => r.Ratio).Order().ToArray(), runs.Select(r => r.Refused).Order().ToArray());
    }

    /// <summary>Per seed, 1 when slow start ended on "queue seen" (its first change other than its growth, read from LimitChanged), else 0.</summary>
    public static double[] SlowStartQueueExits(AdaptiveLimitOptions options, int callSize, DownstreamScript script, TimeSpan duration) =>
        PerSeed(seed =>
        {
            var name = $"slow-start-exit-{Guid.NewGuid():N}";
            using var listener = new LimitChangeListener(name);
            var simulation = new LimitSimulation(script, seed) { CallSize = callSize };
            simulation.Run(ConcurrencyLimit.Adaptive(simulation.Options(options with { Name = name })), duration: duration);
            var ended = listener.Changes.OrderBy(c => c.Sequence).FirstOrDefault(c => c.Reason != nameof(LimitChangeReason.SlowStartGrowth));
            return ended?.Reason == nameof(LimitChangeReason.QueueSeen) ? 1 : 0;
        });

    /// <summary>Jain's index of <paramref name="clients"/> independent clients' goodputs over the second half, each with its own limit.</summary>
    public static double[] Fairness(AdaptiveLimitOptions options, int clients, DownstreamScript script) =>
        PerSeed(seed =>
        {
            var simulation = new SharedDownstreamSimulation(script, seed);
            for (var i = 0; i < clients; i++)
            {
                simulation.AddClient(clock => ConcurrencyLimit.Adaptive(options with { TimeProvider = clock }));
            }

            return simulation.Run(Run).Fairness(SecondHalf, Run);
        });

    /// <summary>
    /// Per seed, Jain's index of <paramref name="clients"/> independent clients' goodputs over the second half, each with its
    /// own limit, and their goodput together over Fixed(<paramref name="fixedLimit"/>)'s alone; both ascending.
    /// </summary>
    public static (double[] Fairness, double[] Totals) FairnessAndTotals(AdaptiveLimitOptions options, int clients, DownstreamScript script, int fixedLimit)
    {
        var runs = Enumerable.Range(1, Seeds).Select(seed =>
        {
            var simulation = new SharedDownstreamSimulation(script, seed);
            for (var i = 0; i < clients; i++)
            {
                simulation.AddClient(clock => ConcurrencyLimit.Adaptive(options with { TimeProvider = clock }));
            }

            simulation.Run(Run);
            var best = new LimitSimulation(script, seed);
            best.Run(ConcurrencyLimit.Fixed(fixedLimit), duration: Run);
            var together = Enumerable.Range(0, clients).Sum(i => simulation.Successes(i, SecondHalf, Run));
            return (Fairness: simulation.Fairness(SecondHalf, Run), Total: together / (Run - SecondHalf).TotalSeconds / Throughput(best, SecondHalf));
        }).ToList();
        return (runs.Select(r => r.Fairness).Order().ToArray(), runs.Select(r => r.Total).Order().ToArray());
    }

    /// <summary>The share of the goodput over the second half of a client that joins at 3 s beside one already running.</summary>
    public static double[] JoinerShares(AdaptiveLimitOptions options, DownstreamScript script) =>
        PerSeed(seed =>
        {
            var simulation = new SharedDownstreamSimulation(script, seed)
                .AddClient(clock => ConcurrencyLimit.Adaptive(options with { TimeProvider = clock }))
                .AddClient(clock => ConcurrencyLimit.Adaptive(options with { TimeProvider = clock }), TimeSpan.FromSeconds(3));
            simulation.Run(Run);
            var joiner = simulation.Successes(1, SecondHalf, Run);
            return (double)joiner / (simulation.Successes(0, SecondHalf, Run) + joiner);
        });

    /// <summary>The percentage of calls refused when each "no" takes <paramref name="rejectionTime"/>.</summary>
    public static double[] RefusedPercents(AdaptiveLimitOptions options, int callSize, DownstreamScript script, TimeSpan rejectionTime) =>
        PerSeed(seed =>
        {
            var simulation = new LimitSimulation(script, seed) { CallSize = callSize, RejectionTime = rejectionTime };
            simulation.Run(ConcurrencyLimit.Adaptive(simulation.Options(options)), duration: Run);
            return 100.0 * simulation.Rejected / simulation.Calls.Count;
        });

    /// <summary>The median calls in flight over the second half of a run on a pool of <paramref name="capacity"/> with a queue and lognormal service times (20 ms median), over the capacity.</summary>
    public static double[] QueuedLevels(AdaptiveLimitOptions options, int capacity) =>
        PerSeed(seed => QueuedRun(options, capacity, seed).SecondHalfMedian / (double)capacity);

    /// <summary>Issue 3's settle test on the same pool: per seed, the larger of the final limit and the second half's median, over the capacity.</summary>
    public static double[] QueuedSettles(AdaptiveLimitOptions options, int capacity) =>
        PerSeed(seed =>
        {
            var (final, secondHalfMedian) = QueuedRun(options, capacity, seed);
            return Math.Max(final, secondHalfMedian) / (double)capacity;
        });

    /// <summary>The law's latency without a queue (ms) after <paramref name="items"/> items on the same lognormal pool, per seed (the harness reports no starts).</summary>
    public static double[] QueuedBaselines(int capacity, int items) =>
        PerSeed(seed =>
        {
            var simulation = new DownstreamSimulation(capacity, Overflow.Queue, TimeSpan.FromMilliseconds(20), seed, serviceTimes: ServiceTimes.LogNormal);
            var limit = (AdaptiveConcurrencyLimit)ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { TimeProvider = simulation.Clock });
            simulation.Run(limit, items);
            return limit.Baseline.TotalMilliseconds;
        });

    /// <summary>Calls in flight over the last 2 s of <see cref="IncidentScenarios.SlowDegradation"/>, over its last capacity (8).</summary>
    public static double[] DegradedLevels(AdaptiveLimitOptions options, int callSize) =>
        PerSeed(seed =>
        {
            var simulation = new LimitSimulation(IncidentScenarios.SlowDegradation(), seed) { CallSize = callSize };
            simulation.Run(ConcurrencyLimit.Adaptive(simulation.Options(options)), int.MaxValue, IncidentScenarios.DegradationSpan + TimeSpan.FromSeconds(2));
            return simulation.Timeline.Where(s => s.At >= IncidentScenarios.DegradationSpan).Average(s => s.InFlight) / 8;
        });

    /// <summary>
    /// A pool of <paramref name="capacity"/> (40 ms) that refuses what it cannot serve for 5 s, then queues it: per seed, the
    /// limit over the last 30 s of a minute over the pool, and the throughput over the pool's.
    /// </summary>
    public static (double Limit, double Throughput)[] RefusedThenQueued(AdaptiveLimitOptions options, int capacity)
    {
        var pool = new DownstreamState { Capacity = capacity, Queue = 100_000, Latency = TimeSpan.FromMilliseconds(40) };
        var script = DownstreamScript.Phases((TimeSpan.Zero, pool with { Queue = 0 }), (TimeSpan.FromSeconds(5), pool));
        var settled = TimeSpan.FromSeconds(30);
        var end = TimeSpan.FromSeconds(60);
        return Enumerable.Range(1, Seeds).Select(seed =>
        {
            var simulation = new LimitSimulation(script, seed);
            simulation.Run(ConcurrencyLimit.Adaptive(simulation.Options(options)), duration: end);
            var limit = simulation.Timeline.Where(s => s.At >= settled).Average(s => s.Limit) / capacity;
            var throughput = simulation.Successes.Count(t => t >= settled) / (end - settled).TotalSeconds * 0.040 / capacity;
            return (limit, throughput);
        }).ToArray();
    }

    /// <summary>CPU-bound bodies of 10 ms on 2 simulated cores (processor sharing), 600 items: per seed, the larger of the final limit and the second half's median.</summary>
    public static double[] SharedCoreLevels(AdaptiveLimitOptions options, ServiceTimes serviceTimes = ServiceTimes.Steady) =>
        PerSeed(seed =>
        {
            var simulation = new DownstreamSimulation(2, Overflow.Share, TimeSpan.FromMilliseconds(10), seed, serviceTimes: serviceTimes);
            var limit = ConcurrencyLimit.Adaptive(options with { TimeProvider = simulation.Clock });
            var secondHalf = simulation.Run(limit, items: 600, tailFraction: 0.5);
            return Math.Max(limit.Current, secondHalf.Order().ElementAt(secondHalf.Length / 2));
        });

    /// <summary>CPU-bound bodies of 5 ms on 2 simulated cores, 800 items: per seed, the highest limit over the last 30% of the run.</summary>
    public static double[] SharedCoreTailPeaks(AdaptiveLimitOptions options) =>
        PerSeed(seed =>
        {
            var simulation = new DownstreamSimulation(2, Overflow.Share, TimeSpan.FromMilliseconds(5), seed);
            return simulation.Run(ConcurrencyLimit.Adaptive(options with { TimeProvider = simulation.Clock }), items: 800).Max();
        });

    /// <summary>
    /// 5,000 waits of 20 ms with room for everything, where the calls started in one 20 ms spell of slow start answer after
    /// 80 ms instead: per seed, the run's time beyond the clean run's and the 60 ms the stall adds, over the clean run's.
    /// Returns the worst seed and every seed's times.
    /// </summary>
    public static (double Worst, string Context) StallCost(LawPlace where)
    {
        var wait = new DownstreamState { Capacity = 100_000, Latency = TimeSpan.FromMilliseconds(20) };
        var stalled = DownstreamScript.Phases((TimeSpan.Zero, wait), (TimeSpan.FromMilliseconds(50), wait with { Latency = TimeSpan.FromMilliseconds(80) }), (TimeSpan.FromMilliseconds(70), wait));
        var worst = 0.0;
        var context = new List<string>();
        for (var seed = 1; seed <= Seeds; seed++)
        {
            TimeSpan Duration(DownstreamScript script)
            {
                var simulation = new LimitSimulation(script, seed) { CallSize = where.CallSize };
                simulation.Run(where.Create(simulation), items: 5_000);
                return simulation.Now;
            }

            var clean = Duration(DownstreamScript.Constant(wait));
            var withStall = Duration(stalled);
            worst = Math.Max(worst, (withStall - clean - TimeSpan.FromMilliseconds(60)) / clean);
            context.Add($"seed {seed}: {clean.TotalMilliseconds:F0} -> {withStall.TotalMilliseconds:F0} ms");
        }

        return (worst, string.Join("; ", context));
    }


    /// <summary>
    /// A hard cap of <paramref name="capacity"/> (20 ms, no queue) down to an eighth for 1 s from 0.5 s, first contact cold (a
    /// drain measured the latency without a queue before the low): per seed, the goodput over the 1.5 s after the capacity
    /// came back, over Fixed(<paramref name="capacity"/>)'s.
    /// </summary>
    public static double[] RecoveryRatios(AdaptiveLimitOptions options, int callSize, int capacity = 32)
    {
        var latency = TimeSpan.FromMilliseconds(20);
        TimeSpan low = TimeSpan.FromSeconds(0.5), back = TimeSpan.FromSeconds(1.5);
        var script = DownstreamScript.Phases(
            (TimeSpan.Zero, new DownstreamState { Capacity = capacity, Queue = 0, Latency = latency }),
            (low, new DownstreamState { Capacity = capacity / 8, Queue = 0, Latency = latency }),
            (back, new DownstreamState { Capacity = capacity, Queue = 0, Latency = latency }));
        return ThroughputRatios(options, callSize, script, capacity, back, TimeSpan.FromSeconds(3), ColdStart);
    }

    /// <summary>
    /// The lab's drift (adaptive-incidents' degrading phase): a pool of 32 with a queue of 64, from 0.5 s to 1.5 s down to 8
    /// slots while the latency rises 20 -> 100 ms in six steps, first contact cold: per seed, the goodput over the second
    /// after the drift (to <paramref name="to"/>, 2.5 s by default), over Fixed(8)'s (the degraded pool's best).
    /// </summary>
    public static double[] DriftRatios(AdaptiveLimitOptions options, int callSize, TimeSpan? to = null)
    {
        var steps = new List<(TimeSpan, DownstreamState)> { (TimeSpan.Zero, new DownstreamState { Capacity = 32, Queue = 64, Latency = TimeSpan.FromMilliseconds(20) }) };
        for (var k = 1; k <= 6; k++)
        {
            var f = k / 6.0;
            steps.Add((TimeSpan.FromMilliseconds(500 + (200 * (k - 1))), new DownstreamState { Capacity = (int)Math.Round(32 * Math.Pow(8 / 32.0, f)), Queue = 64, Latency = TimeSpan.FromMilliseconds(20 * Math.Pow(5, f)) }));
        }

        return ThroughputRatios(options, callSize, DownstreamScript.Phases([.. steps]), 8, TimeSpan.FromSeconds(1.5), to ?? TimeSpan.FromSeconds(2.5), ColdStart);
    }

    /// <summary>One run of <see cref="QueuedLevels"/>' pool: the final limit and the second half's median limit.</summary>
    private static (int Final, int SecondHalfMedian) QueuedRun(AdaptiveLimitOptions options, int capacity, int seed)
    {
        var simulation = new DownstreamSimulation(capacity, Overflow.Queue, TimeSpan.FromMilliseconds(20), seed, serviceTimes: ServiceTimes.LogNormal);
        var limit = ConcurrencyLimit.Adaptive(options with { TimeProvider = simulation.Clock });
        var secondHalf = simulation.Run(limit, items: 200 * capacity, tailFraction: 0.5);
        return (limit.Current, secondHalf.Order().ElementAt(secondHalf.Length / 2));
    }

    /// <summary>Successes per second from <paramref name="from"/> to the end.</summary>
    private static double Throughput(LimitSimulation simulation, TimeSpan from) => simulation.Successes.Count(t => t >= from) / (simulation.Now - from).TotalSeconds;

    /// <summary>One figure per seed, in ascending order.</summary>
    public static double[] PerSeed(Func<int, double> measure) => Enumerable.Range(1, Seeds).Select(measure).Order().ToArray();
}
