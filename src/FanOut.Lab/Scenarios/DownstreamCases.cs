using System.Globalization;

using FanOut.Downstream;
using FanOut.Downstream.Latency;
using FanOut.Lab.Results;
using FanOut.Lab.Running;
using FanOut.Lab.Strategies;
using FanOut.Lab.Workloads;
using FanOut.Lab.Workloads.RealIo;

namespace FanOut.Lab.Scenarios;

/// <summary>What the real-I/O scenarios share: their sizes, run policies, the strategies they compare, and verdict phrases.</summary>
internal static class DownstreamCases
{
    /// <summary>Cases of a second or so per run: one warm-up (opens the client's connections), 3 to 10 runs within 2 s.</summary>
    public static readonly RunPolicy Quick = new(1, 3, 10, TimeSpan.FromSeconds(2));

    /// <summary>Cases of many seconds per run (a DOP of 2 over 2,000 calls): one measured run, no warm-up, to keep <c>run all</c> short.</summary>
    /// <remarks>The warm-up matters little here: such a case opens only as many connections as its DOP.</remarks>
    public static readonly RunPolicy Once = RunPolicy.Once("measured once, no warm-up: at a DOP of ProcessorCount one run takes many seconds");

    /// <summary>Every call gives up after this (not scaled: a safety net, never reached by a healthy server).</summary>
    public static readonly TimeSpan CallTimeout = TimeSpan.FromSeconds(5);

    /// <summary>FanOut's default row whose body throws 429/503 answers (so the library backs off and runs them again).</summary>
    public const string OverloadThrown = "429 thrown";

    /// <summary>The common limit of the bounded strategies.</summary>
    public const int Limit = 50;

    /// <summary>The item count at <paramref name="size"/>: <paramref name="items"/> at scale 1, shrinking with the scale but never below <paramref name="floor"/>.</summary>
    /// <remarks>Item counts shrink here, unlike the seed scenarios, because the slowest strategy (DOP 2) takes N x latency / 2;
    /// the floor keeps N well above the server's capacity + queue so 429s still show.</remarks>
    public static int Items(ScenarioSize size, int items, int floor) =>
        Math.Max(floor, (int)Math.Round(items * size.Scale));

    /// <summary>A log-normal latency with median and p99 scaled by <paramref name="size"/>.</summary>
    public static LatencySpec LogNormal(ScenarioSize size, double medianMs, double p99Ms) =>
        LatencySpec.Parse(string.Create(CultureInfo.InvariantCulture, $"lognormal:{Math.Round(medianMs * size.Scale, 3)},p99={Math.Round(p99Ms * size.Scale, 3)}"));

    /// <summary>The server the real-I/O scenarios start: a capacity, a queue and lognormal latency scaled with <paramref name="size"/>, seed 42.</summary>
    public static DownstreamOptions Server(ScenarioSize size, int capacity, int queue, double medianMs, double p99Ms) =>
        new() { Capacity = capacity, Queue = queue, Latency = LogNormal(size, medianMs, p99Ms), Seed = 42 };

    /// <summary>The server as the scenario line shows it: <c>capacity 64 + queue 64, lognormal:20,p99=80</c>.</summary>
    public static string Describe(DownstreamOptions server)
    {
        ArgumentNullException.ThrowIfNull(server);
        return $"capacity {server.Capacity} + queue {server.Queue}, {server.Latency}";
    }

    /// <summary>Seed 000's comparison against a real server: unbounded WhenAll, the default ForEachAsync, four ways to hold 50
    /// (FanOut's among them), and FanOut's adaptive limit, which is told nothing about the server.</summary>
    /// <param name="server">The downstream.</param>
    /// <param name="items">How many calls.</param>
    /// <param name="withDefaultDop">
    /// Whether to include ForEachAsync at its default DOP: ~27 s a run at 2 in flight. A scenario whose point it does not
    /// make (a rate limit is never reached at 2 in flight) leaves it to downstream-capacity, which keeps <c>run all</c> short.
    /// </param>
    public static List<LabCase> SeedComparison(DownstreamOptions server, int items, bool withDefaultDop = true)
    {
        Workload Get() => new HttpGetWorkload(server, CallTimeout, items);
        List<LabCase> cases =
        [
            new(new WhenAllStrategy(), Get, items, Policy: Quick),
            new(new ParallelForEachAsyncStrategy(Limit), Get, items, Policy: Quick),
            new(new SemaphoreSlimWhenAllStrategy(Limit), Get, items, Policy: Quick),
            new(new ChannelWorkersStrategy(Limit), Get, items, Policy: Quick),
            new(FanOutStrategy.Fixed(Limit), Get, items, Policy: Quick),
            new(FanOutStrategy.Adaptive(), Get, items, Policy: Quick),
            new(FanOutStrategy.Adaptive(variant: OverloadThrown), () => new HttpGetWorkload(server, CallTimeout, items) { ThrowOnOverload = true }, items, Policy: Quick),
        ];
        if (withDefaultDop)
        {
            cases.Insert(1, new(new ParallelForEachAsyncStrategy(), Get, items, Policy: Once));
        }

        return cases;
    }

    /// <summary>The succeeded case with the most successful items per second, or null.</summary>
    public static CaseResult? MostThroughput(ScenarioResult measured) =>
        measured.Cases.Where(c => c.Succeeded && c.Io is not null).MaxBy(c => c.Io!.SuccessesPerSecond);

    /// <summary><c>1,234 ok / 766 x 429 (server peak 64)</c>.</summary>
    public static string Outcome(CaseResult c)
    {
        var io = c.Io!;
        var text = $"{io.Successes:N0} ok";
        if (io.Failures > 0)
        {
            var kinds = io.FailuresByStatus.Select(s => $"{s.Value:N0} x {s.Key}")
                .Concat(new[] { (io.FailuresSocket, "socket"), (io.FailuresTimeout, "timeout"), (io.FailuresOther, "other") }
                    .Where(k => k.Item1 > 0).Select(k => $"{k.Item1:N0} {k.Item2}"));
            text += $", {string.Join(", ", kinds)}";
        }

        return io.PeakConcurrentServed is { } peak ? $"{text}, server peak {peak:N0}" : text;
    }

    /// <summary><c>2,345 ok/s</c>.</summary>
    public static string Rate(CaseResult c) => $"{c.Io!.SuccessesPerSecond:N0} ok/s";
}
