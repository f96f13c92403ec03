using System.Globalization;

using FanOut.Downstream;
using FanOut.Lab.Fleet;
using FanOut.Lab.Results;
using FanOut.Lab.Running;
using FanOut.Redis.FleetWorker;

namespace FanOut.Lab.Scenarios;

/// <summary>
/// Four worker processes calling one downstream of capacity 64 (no queue): one shared Redis limit of 48 for the fleet,
/// beside the same four workers with a local Fixed(48) each. Runs only where redis-server is installed.
/// </summary>
public sealed class DownstreamFleetScenario : Scenario
{
    private const int Items = 4000;
    private const int Workers = 4;
    private const int Capacity = 64;
    private const int Budget = 48;

    /// <inheritdoc/>
    public override string Id => "downstream-fleet";

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
        ];
    }

    /// <summary>The quick policy, with what one run of four worker processes took on the 2-core VM (a case took ~5 s in all),
    /// for the duration estimate: the cost model sees neither the processes' start nor Redis.</summary>
    private static readonly RunPolicy s_fleetPolicy = DownstreamCases.Quick with { MeasuredRun = TimeSpan.FromSeconds(1.1) };

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
        return $"{Workers} processes sharing one Redis limit of {Budget} kept the server's peak at {Count(s.PeakConcurrentServed)} ({within} the budget), {Count(s.Rejected429)} x 429, {DownstreamCases.Rate(shared)}; " +
            $"with a local Fixed({Budget}) each they offered up to {Workers * Budget} at once: server peak {Count(l.PeakConcurrentServed)} (its capacity is {Capacity}), {Count(l.Rejected429)} x 429, {DownstreamCases.Rate(local)}. " +
            $"Coordination cost: {Ms(s.PermitWaitMsPerItem)} ms of permit wait and {Number(s.RoundTripsPerItem)} Redis round trips per item.";
    }

    private static string Count(double? value) => value is { } v ? v.ToString("N0", CultureInfo.InvariantCulture) : "-";

    private static string Ms(double? value) => value is { } v ? v.ToString("0.00", CultureInfo.InvariantCulture) : "-";

    private static string Number(double? value) => value is { } v ? v.ToString("0.000", CultureInfo.InvariantCulture) : "-";
}
