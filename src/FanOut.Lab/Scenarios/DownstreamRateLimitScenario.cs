using FanOut.Downstream;
using FanOut.Lab.Results;
using FanOut.Lab.Strategies;
using FanOut.Lab.Workloads;
using FanOut.Lab.Workloads.RealIo;

namespace FanOut.Lab.Scenarios;

/// <summary>Seed 000's strategies against a downstream with a token-bucket rate limit of 500 requests/s: a concurrency limit is not a rate limit.</summary>
public sealed class DownstreamRateLimitScenario : Scenario
{
    private const int Items = 2000;
    private const int Capacity = 64;
    private const int Queue = 64;
    private const double Rate = 500;

    /// <summary>About rate x mean latency (500/s x ~24 ms = 12): the DOP at which a concurrency limit happens to respect the rate.</summary>
    private const int LittlesLawDop = 10;

    /// <inheritdoc/>
    public override string Id => "downstream-rate-limit";

    /// <inheritdoc/>
    public override string Purpose => "A real HTTP server with a rate limit: concurrency limits against a paced rate";

    /// <inheritdoc/>
    public override SeedReference Seed { get; } = new(
        "000_501b81ed9e953635.txt",
        "Pick the concurrency you can afford, then choose the API that enforces it. (Seed 002 adds: a burst suits no upstream that has \"a request quota\".)",
        "no real downstream in the seeds: Task.Delay stood in for the call");

    /// <inheritdoc/>
    public override string Describe(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        return $"{DownstreamCases.Items(size, Items, 256)} x GET /item against {Rate:N0} requests/s (token bucket), {DownstreamCases.Describe(Server(size))}";
    }

    /// <inheritdoc/>
    public override IReadOnlyList<LabCase> Cases(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        var items = DownstreamCases.Items(size, Items, 256);
        var server = Server(size);
        var cases = DownstreamCases.SeedComparison(server, items, withDefaultDop: false);
        Workload Get() => new HttpGetWorkload(server, DownstreamCases.CallTimeout, items);

        // Rate x latency: at scale 1 this takes ~5 s a run, so one run.
        cases.Add(new(new ParallelForEachAsyncStrategy(LittlesLawDop), Get, items, Policy: size.Scale < 0.5 ? DownstreamCases.Quick : DownstreamCases.Once));

        // The library's answer to a rate: a token bucket of the server's rate in front of the usual limit.
        cases.Add(new(FanOutStrategy.FixedWithRate(DownstreamCases.Limit, Rate), Get, items, Policy: size.Scale < 0.5 ? DownstreamCases.Quick : DownstreamCases.Once));
        return cases;
    }

    private static DownstreamOptions Server(ScenarioSize size) =>
        DownstreamCases.Server(size, Capacity, Queue, 20, 80) with { RatePerSecond = Rate };

    /// <inheritdoc/>
    public override string Verdict(ScenarioResult measured)
    {
        ArgumentNullException.ThrowIfNull(measured);
        var whenAll = Find.Case(measured, "Task.WhenAll");
        var dop50 = Find.Case(measured, "Parallel.ForEachAsync (DOP 50)");
        var dop10 = Find.Case(measured, $"Parallel.ForEachAsync (DOP {LittlesLawDop})");
        var best = DownstreamCases.MostThroughput(measured);
        if (whenAll?.Io is null || dop50?.Io is null || best is null)
        {
            return "Not enough cases finished to compare with the seed.";
        }

        var verdict = $"Adds what the seed leaves out: a concurrency limit is not a rate limit. Against {Rate:N0} requests/s, WhenAll got {DownstreamCases.Outcome(whenAll)} and DOP 50 still got {DownstreamCases.Outcome(dop50)} " +
            $"({dop50.Io.Rejected429 / Math.Max(1, dop50.Io.Successes + dop50.Io.Failures):P0} turned away), because 50 calls of ~24 ms ask for ~2,000/s.";
        if (dop10?.Io is not null)
        {
            verdict += $" DOP {LittlesLawDop} (about rate x latency) got {DownstreamCases.Outcome(dop10)}, {DownstreamCases.Rate(dop10)} in {Find.Ms(dop10.MeanMs)}.";
        }

        if (Find.Case(measured, $"FanOut (default, {DownstreamCases.OverloadThrown})") is { Io: not null, LimitFinal: { } settled } listening)
        {
            verdict += $" FanOut's default, whose body throws each 429 (an overload: the limit backs off and the item runs again after the server's Retry-After), settled at {settled:N0} and got {DownstreamCases.Outcome(listening)}, {DownstreamCases.Rate(listening)}" +
                (Find.Case(measured, "FanOut (adaptive)") is { Io: not null } deaf ? $"; blind to the 429s (counted, not thrown) it climbed and got {DownstreamCases.Outcome(deaf)}." : ".");
        }

        if (Find.Case(measured, $"FanOut (Fixed {DownstreamCases.Limit}, {Rate:N0}/s bucket)") is { Io: not null } paced)
        {
            verdict += $" With a {Rate:N0}/s TokenBucketRateLimiter in FanOutOptions.RateLimiter beside Fixed({DownstreamCases.Limit}), FanOut got {DownstreamCases.Outcome(paced)}, {DownstreamCases.Rate(paced)}: a rate limit wants a rate limiter.";
        }

        // Items, not attempts: a row that ran its refused items again until they succeeded (FanOut's default with each 429
        // thrown) counts its 429s as failures, and still completed every item.
        var complete = measured.Cases.Where(c => c.Succeeded && c.Io is not null && CompletedEveryItem(c)).MaxBy(c => c.Io!.SuccessesPerSecond);
        // "best" among the strategies that dropped items, so the sentence names one of them, never a row that completed everything.
        var bursty = measured.Cases.Where(c => c.Succeeded && c.Io is not null && !CompletedEveryItem(c)).MaxBy(c => c.Io!.SuccessesPerSecond);
        if (bursty is not null)
        {
            verdict += $" The bursty strategies' ~{Rate:N0} ok/s (best of those that dropped items: {bursty.Strategy}, {DownstreamCases.Rate(bursty)}) lasted only until every item had been tried once: they finished fast by dropping most of the work.";
        }
        return complete is null
            ? verdict
            : verdict + $" Of the strategies that completed every item, {complete.Strategy} was fastest ({DownstreamCases.Rate(complete)}).";
    }

    /// <summary>True when every item of the case succeeded (its item count from the case's parameters; without one, when none failed).</summary>
    private static bool CompletedEveryItem(CaseResult c) =>
        Find.Number(c, "itemCount") is { } items ? c.Io!.Successes >= items : c.Io!.Failures == 0;
}
