using FanOut.Tests.Infrastructure;

namespace FanOut.Tests.Limits.Simulation;

/// <summary>
/// Issue 36's downstream shapes measured over <see cref="Seeds"/> seeds for one place's limit options: what
/// <see cref="DownstreamShapeScenarioTests"/> (the default law) and <see cref="StagedLawShapeTests"/> (the staged law)
/// assert. Every result is one figure per seed, in ascending order.
/// </summary>
internal static class ShapeMeasurement
{
    public const int Seeds = 20;

    /// <summary>How long each run lasts, and where its second half (the part judged) begins.</summary>
    public static readonly TimeSpan Run = TimeSpan.FromSeconds(10), SecondHalf = TimeSpan.FromSeconds(5);

    /// <summary>Successes per second of the limit's run over Fixed(<paramref name="fixedLimit"/>)'s, from <paramref name="from"/> to <paramref name="to"/>.</summary>
    public static double[] ThroughputRatios(AdaptiveLimitOptions options, int callSize, DownstreamScript script, int fixedLimit, TimeSpan from, TimeSpan to) =>
        PerSeed(seed =>
        {
            var adaptive = new LimitSimulation(script, seed) { CallSize = callSize };
            adaptive.Run(ConcurrencyLimit.Adaptive(adaptive.Options(options)), duration: to);
            var best = new LimitSimulation(script, seed) { CallSize = callSize };
            best.Run(ConcurrencyLimit.Fixed(fixedLimit), duration: to);
            return Throughput(adaptive, from) / Throughput(best, from);
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
        PerSeed(seed =>
        {
            var simulation = new DownstreamSimulation(capacity, Overflow.Queue, TimeSpan.FromMilliseconds(20), seed, serviceTimes: ServiceTimes.LogNormal);
            var secondHalf = simulation.Run(ConcurrencyLimit.Adaptive(options with { TimeProvider = simulation.Clock }), items: 200 * capacity, tailFraction: 0.5);
            return secondHalf.Order().ElementAt(secondHalf.Length / 2) / (double)capacity;
        });

    /// <summary>Successes per second from <paramref name="from"/> to the end.</summary>
    private static double Throughput(LimitSimulation simulation, TimeSpan from) => simulation.Successes.Count(t => t >= from) / (simulation.Now - from).TotalSeconds;

    private static double[] PerSeed(Func<int, double> measure) => Enumerable.Range(1, Seeds).Select(measure).Order().ToArray();
}
