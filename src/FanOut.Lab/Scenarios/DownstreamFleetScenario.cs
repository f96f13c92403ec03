using System.Globalization;

using FanOut.Downstream;
using FanOut.Lab.Fleet;
using FanOut.Lab.Results;
using FanOut.Lab.Running;
using FanOut.Redis.FleetWorker;

namespace FanOut.Lab.Scenarios;

/// <summary>
/// Four worker processes calling one downstream of capacity 64 (no queue): one shared Redis limit of 48 for the fleet,
/// beside the same four workers with a local Fixed(48) each; then a shared budget of 64 (the best a static budget can do
/// here: the capacity), an adaptive shared budget told nothing, and the adaptive budget again with the capacity halved
/// once half the items were served. Runs only where redis-server is installed.
/// </summary>
public sealed class DownstreamFleetScenario : Scenario
{
    private const int Items = 4000;
    private const int Workers = 4;
    private const int Capacity = 64;
    private const int Budget = 48;
    private const string Adaptive = "FanOut, shared adaptive Redis per fleet";
    private const string AdaptiveHalved = "FanOut, shared adaptive Redis, capacity halved mid-run";

    /// <inheritdoc/>
    public override string Id => "downstream-fleet";

    /// <inheritdoc/>
    public override string Purpose => "Four processes, one downstream: a shared Redis limit against a local limit in each";

    /// <inheritdoc/>
    public override SeedReference Seed { get; } = new(
        "000_501b81ed9e953635.txt",
        "Pick the concurrency you can afford, then choose the API that enforces it.",
        "one process in the seed; the budget the downstream can afford is per fleet when several processes call it");

    /// <inheritdoc/>
    public override string Describe(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        var line = $"{DownstreamCases.Items(size, Items, 1024)} x GET /item from {Workers} processes against capacity {Capacity}, no queue, {Server(size).Latency}";
        return LocalRedisServer.IsInstalled ? line : $"{line}: skipped, redis-server is not installed (Debian: apt-get install -y redis-server)";
    }

    /// <inheritdoc/>
    public override IReadOnlyList<LabCase> Cases(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        if (!LocalRedisServer.IsInstalled)
        {
            return [];
        }

        var server = Server(size);
        var items = DownstreamCases.Items(size, Items, 1024);
        return
        [
            new(FleetStrategy.SharedRedis(Budget), () => new FleetWorkload(server, Workers, needsRedis: true), items, Policy: s_fleetPolicy),
            new(FleetStrategy.LocalFixed(Budget), () => new FleetWorkload(server, Workers, needsRedis: false), items, Policy: s_fleetPolicy),
            new(FleetStrategy.SharedRedis(Capacity), () => new FleetWorkload(server, Workers, needsRedis: true), items, Policy: s_fleetPolicy),
            new(FleetStrategy.SharedAdaptive(Adaptive), () => new FleetWorkload(server, Workers, needsRedis: true), items, Policy: s_fleetPolicy),
            new(FleetStrategy.SharedAdaptive(AdaptiveHalved), () => new FleetWorkload(server, Workers, needsRedis: true, halveCapacity: true), items, Policy: s_fleetPolicy),
        ];
    }

    /// <summary>The quick policy, with what one run of four worker processes took on the 2-core VM (a case took 5.3-7.7 s in
    /// all), for the duration estimate: the cost model sees neither the processes' start nor Redis.</summary>
    private static readonly RunPolicy s_fleetPolicy = DownstreamCases.Quick with { MeasuredRun = TimeSpan.FromSeconds(1.45) };

    private static DownstreamOptions Server(ScenarioSize size) => DownstreamCases.Server(size, Capacity, 0, 20, 80);

    /// <inheritdoc/>
    public override string Verdict(ScenarioResult measured)
    {
        ArgumentNullException.ThrowIfNull(measured);
        if (!LocalRedisServer.IsInstalled)
        {
            return "Skipped: redis-server is not installed on this machine.";
        }

        var shared = Find.Case(measured, FleetStrategy.SharedRedis(Budget).Name);
        var local = Find.Case(measured, FleetStrategy.LocalFixed(Budget).Name);
        if (shared?.Io is not { } s || local?.Io is not { } l)
        {
            return "Not enough cases finished to compare.";
        }

        var within = s.PeakConcurrentServed <= Budget ? "within" : "ABOVE";
        var text = $"{Workers} processes sharing one Redis limit of {Budget} kept the server's peak at {Count(s.PeakConcurrentServed)} ({within} the budget), {Count(s.Rejected429)} x 429, {DownstreamCases.Rate(shared)}; " +
            $"with a local Fixed({Budget}) each they offered up to {Workers * Budget} at once: server peak {Count(l.PeakConcurrentServed)} (its capacity is {Capacity}), {Count(l.Rejected429)} x 429, {DownstreamCases.Rate(local)}. " +
            $"Coordination cost: {Ms(s.PermitWaitMsPerItem)} ms of permit wait and {Number(s.RoundTripsPerItem)} Redis round trips per item.";
        return text + AdaptiveVerdict(measured);
    }

    /// <summary>The adaptive rows against the best static shared budget, in the table's own numbers.</summary>
    private static string AdaptiveVerdict(ScenarioResult measured)
    {
        var statics = new[] { Find.Case(measured, FleetStrategy.SharedRedis(Budget).Name), Find.Case(measured, FleetStrategy.SharedRedis(Capacity).Name) }
            .Where(c => c?.Io is not null).Select(c => c!).ToList();
        var adaptive = Find.Case(measured, Adaptive);
        var halved = Find.Case(measured, AdaptiveHalved);
        if (statics.Count == 0 || adaptive?.Io is not { } a)
        {
            return string.Empty;
        }

        var best = statics.MaxBy(c => c.Io!.SuccessesPerSecond)!;
        var ratio = best.Io!.SuccessesPerSecond > 0 ? a.SuccessesPerSecond / best.Io.SuccessesPerSecond : 0;
        var text = $" Told nothing, an adaptive shared budget made {DownstreamCases.Rate(adaptive)}, {ratio.ToString("0.00", CultureInfo.InvariantCulture)}x the best static shared budget ({best.Strategy}, {DownstreamCases.Rate(best)}), " +
            $"with {Count(a.Rejected429)} x 429 ({Share(a.Rejected429, Calls(a))} of calls) and a server peak of {Count(a.PeakConcurrentServed)}; {Converged(a, Capacity)}.";
        if (halved?.Io is { } h)
        {
            text += $" With the capacity halved to {Capacity / 2} once half the items were served, the fleet followed it down: {Converged(h, Capacity / 2)}; {Count(h.Rejected429)} x 429 in all ({Share(h.Rejected429, Calls(h))} of calls), {DownstreamCases.Rate(halved)}.";
        }

        return text;
    }

    private static string Converged(Results.IoResult io, int capacity) => io.ConvergenceMs is { } ms
        ? $"its budget settled within {FleetBand(capacity)} after {ms.ToString("N0", CultureInfo.InvariantCulture)} ms and then stayed between {Count(io.BudgetLowAfterConvergence)} and {Count(io.BudgetHighAfterConvergence)}, " +
            $"with {Count(io.Rejected429AfterConvergence)} x 429 ({Share(io.Rejected429AfterConvergence, io.CallsAfterConvergence)} of calls) from then on"
        : $"its budget never stayed within {FleetBand(capacity)} to the end of the run";

    private static string FleetBand(int capacity) =>
        string.Create(CultureInfo.InvariantCulture, $"{Math.Ceiling(FleetBudgetBand.Low * capacity):0}-{Math.Floor(FleetBudgetBand.High * capacity):0} (capacity {capacity})");

    private static double? Calls(Results.IoResult io) => io.RequestsServed is { } served && io.Rejected429 is { } rejected ? served + rejected : null;

    private static string Share(double? part, double? whole) =>
        part is { } p && whole is { } w && w > 0 ? (p / w).ToString("0.0%", CultureInfo.InvariantCulture) : "-";

    private static string Count(double? value) => value is { } v ? v.ToString("N0", CultureInfo.InvariantCulture) : "-";

    private static string Ms(double? value) => value is { } v ? v.ToString("0.00", CultureInfo.InvariantCulture) : "-";

    private static string Number(double? value) => value is { } v ? v.ToString("0.000", CultureInfo.InvariantCulture) : "-";
}
