using FanOut.Downstream;
using FanOut.Lab.Results;

namespace FanOut.Lab.Scenarios;

/// <summary>Seed 000's trade-off against a real downstream: 2,000 GETs at a server that serves 64 at once and queues 64 more.</summary>
public sealed class DownstreamCapacityScenario : Scenario
{
    private const int Items = 2000;
    /// <summary>Requests the server serves at once.</summary>
    public const int Capacity = 64;

    /// <summary>Requests the server queues beyond those it serves; past capacity + queue it answers 429.</summary>
    public const int Queue = 64;

    /// <inheritdoc/>
    public override string Id => "downstream-capacity";

    /// <inheritdoc/>
    public override string Purpose => "A real HTTP server with a capacity: which API gets every item through, and which gets 429s";

    /// <inheritdoc/>
    public override SeedReference Seed { get; } = new(
        "000_501b81ed9e953635.txt",
        "Pick the concurrency you can afford, then choose the API that enforces it; an unbounded Task.WhenAll over a large list \"is a denial-of-service attack on your own downstream service\"; the default DOP (ProcessorCount) is tuned for CPU, not I/O.",
        "no real downstream in the seed: Task.Delay(20) stood in for the call");

    /// <inheritdoc/>
    public override string Describe(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        return $"{DownstreamCases.Items(size, Items, 256)} x GET /item against {DownstreamCases.Describe(Server(size))}";
    }

    /// <inheritdoc/>
    public override IReadOnlyList<LabCase> Cases(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        return DownstreamCases.SeedComparison(Server(size), DownstreamCases.Items(size, Items, 256));
    }

    private static DownstreamOptions Server(ScenarioSize size) => DownstreamCases.Server(size, Capacity, Queue, 20, 80);

    /// <inheritdoc/>
    public override string Verdict(ScenarioResult measured)
    {
        ArgumentNullException.ThrowIfNull(measured);
        var whenAll = Find.Case(measured, "Task.WhenAll");
        var byDefault = Find.Case(measured, "Parallel.ForEachAsync (default)");
        var best = DownstreamCases.MostThroughput(measured);
        if (whenAll?.Io is null || byDefault?.Io is null || best is null)
        {
            return "Not enough cases finished to compare with the seed.";
        }

        // A client too slow to bring capacity + queue at once (a starved machine opens its connections one by one) is owed no 429.
        var turnedAway = whenAll.Io.Rejected429 > 0
            ? "fast because the server turned calls away"
            : $"the server never held {Capacity + Queue} of its calls at once (peak {whenAll.Io.PeakAtGate:N0}), so it turned none away";
        return $"Agrees, with a real downstream: unbounded Task.WhenAll took {Find.Ms(whenAll.MeanMs)} with {whenAll.PeakInFlight:N0} calls in flight ({DownstreamCases.Outcome(whenAll)}, {DownstreamCases.Rate(whenAll)}): {turnedAway}. " +
            $"The default ForEachAsync took {Find.Ms(byDefault.MeanMs)} ({byDefault.PeakInFlight:N0} in flight = ProcessorCount, {DownstreamCases.Rate(byDefault)}). " +
            $"The most successful items per second came from {best.Strategy}: {DownstreamCases.Rate(best)} ({DownstreamCases.Outcome(best)}) in {Find.Ms(best.MeanMs)}. " +
            $"The server serves {Capacity} at once and queues {Queue}.";
    }
}
