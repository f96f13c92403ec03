using System.Diagnostics;

using FanOut.Redis.Tests.Infrastructure;
using FanOut.Redis.Tests.Infrastructure.FakeClock;
using FanOut.Tests.Limits.Simulation;

using Microsoft.Extensions.Time.Testing;

using StackExchange.Redis;

using Xunit.Abstractions;

namespace FanOut.Redis.Tests.Adaptive.Simulation;

/// <summary>
/// Issue 29 item 3 for the fleet's Redis budget: the simulation suite's scenarios (tests/FanOut.Tests/Limits/Simulation,
/// the same scripts and targets) against three <see cref="RedisConcurrencyLimit"/>s sharing one adaptive budget (default
/// options), each on its own connection as three processes would be, on one <see cref="FakeTimeProvider"/> that the Redis
/// server's clock follows (<see cref="FleetSimulation"/>). The bench <c>fleet-incidents</c> runs the same in real time.
/// </summary>
/// <remarks>
/// The halving (9 simulated seconds) and the long low (26) are the longest: 6-12 s of real time under two busy loops on
/// the 2-core machine, about 3-4 s without them; every settle is real round trips.
/// </remarks>
public sealed class FleetIncidentScenarioTests(FakeClockRedisFixture redis, ITestOutputHelper output) : IClassFixture<FakeClockRedisFixture>
{
    private const int Processes = 3;
    /// <summary>The first contact cases of the suite: capacity, items, the most of the calls that may be rejected.</summary>
    public static TheoryData<int, int, double> FirstContactCases() => new() { { 5, 100, 0.10 }, { 20, 300, 0.05 }, { 64, 1000, 0.05 } };

    [FakeClockTheory]
    [MemberData(nameof(FirstContactCases))]
    public async Task FleetBudget_FirstContactWithAHardCap_RejectsAtMostItsShare(int capacity, int items, double maxShare)
    {
        // Every call sent before the first answer reaches the server 30 ms late (a cold HTTP stack), a later new connection
        // 1 ms late, as in the suite.
        var simulation = await RunAsync(DownstreamScript.Constant(new DownstreamState { Capacity = capacity, Queue = 0 }), items: items, firstContact: true);

        var share = (double)simulation.Rejected / simulation.Calls.Count;
        var context = $"{simulation.Rejected} of {simulation.Calls.Count} calls answered 429 ({share:P1}), {simulation.SucceededItems} ok, {simulation.FailedItems} failed; {Figures(simulation)}";
        output.WriteLine(context);
        Assert.Equal(items, simulation.SucceededItems);
        Assert.True(share <= maxShare, context);
    }

    [FakeClockFact]
    public async Task FleetBudget_CapacityHalvesAndRecovers_SettlesWithinASecondAndRejectsLittleAfter()
    {
        var simulation = await RunAsync(IncidentScenarios.Halving(), IncidentScenarios.HalvingRun);

        IncidentScenarios.AssertHalving(simulation.Timeline, simulation.Calls, output.WriteLine, $"{Figures(simulation)}; ");
    }

    [FakeClockFact]
    public async Task FleetBudget_RecoveryAfterALongLow_IsBackToHalfTheCapacityWithinThreeSeconds()
    {
        var simulation = await RunAsync(IncidentScenarios.LongLow(), IncidentScenarios.LongLowRun);

        IncidentScenarios.AssertLongLow(simulation.Timeline, simulation.Calls, output.WriteLine, $"{Figures(simulation)}; ");
    }

    [FakeClockFact]
    public async Task FleetBudget_RetryAfterStorm_FailsNoItemAndSendsAboutItsOwnSizeDuringThePause()
    {
        var simulation = await RunAsync(IncidentScenarios.RetryAfterStorm(), IncidentScenarios.StormRun);

        IncidentScenarios.AssertStorm(simulation.Timeline, simulation.Calls, simulation.FailedItems, output.WriteLine, $"{Figures(simulation)}; ");
    }

    [FakeClockFact]
    public async Task FleetBudget_HeavyTailedLatencyWithoutOverload_KeepsFourFifthsOfAFixedBudgetsThroughput()
    {
        const int Items = 20_000;
        var script = IncidentScenarios.HeavyTail();
        var adaptive = await RunAsync(script, items: Items);
        var best = await RunAsync(script, items: Items, fixedBudget: 256);

        var ratio = best.Elapsed / adaptive.Elapsed;
        var context = $"{ratio:F2}x a fixed fleet budget of 256's throughput ({best.Elapsed.TotalMilliseconds:F0} / {adaptive.Elapsed.TotalMilliseconds:F0} ms); {Figures(adaptive)}";
        output.WriteLine(context);
        Assert.True(ratio >= 0.8, context);
    }

    [FakeClockFact]
    public async Task FleetBudget_CapWhose429sCarryARetryAfter_IsNotPausedAtEveryProbe()
    {
        // A cap of 32 whose every 429 carries "Retry-After: 1": each refused probe paused the whole fleet for a second (0.09x
        // a fixed budget of 32). A probe's own "no" does not pause (docs/adaptive.md, rule 6); first contact's still do, and
        // cost the first seconds. Target: half a fixed budget's throughput, with the suite's margin.
        const int Items = 16_000;
        var script = IncidentScenarios.HardCapWithRetryAfter(32);
        var adaptive = await RunAsync(script, items: Items);
        var best = await RunAsync(script, items: Items, fixedBudget: 32);

        var ratio = best.Elapsed / adaptive.Elapsed;
        var context = $"{ratio:F2}x a fixed fleet budget of 32's throughput ({best.Elapsed.TotalMilliseconds:F0} / {adaptive.Elapsed.TotalMilliseconds:F0} ms), {adaptive.Rejected} of {adaptive.Calls.Count} calls refused, paused {adaptive.Timeline.Count(t => t.Limit == 0) * FleetSimulation.SamplePeriod.TotalMilliseconds:F0} ms; {Figures(adaptive)}";
        output.WriteLine(context);
        Assert.Equal(Items, adaptive.SucceededItems);
        Assert.True(ratio >= 0.5 * 1.15, context);
    }


    private async Task<FleetSimulation> RunAsync(DownstreamScript script, TimeSpan? duration = null, int items = int.MaxValue, bool firstContact = false, int? fixedBudget = null)
    {
        var server = redis.Server;
        var clock = new FakeTimeProvider(redis.NextStart());
        var simulation = firstContact
            ? new FleetSimulation(script, server, clock) { ColdStart = TimeSpan.FromMilliseconds(30), ConnectTime = TimeSpan.FromMilliseconds(1) }
            : new FleetSimulation(script, server, clock);
        var key = $"fleet-simulation-{Guid.NewGuid():N}";

        // The key's epoch set first: the fleet pays no restart grace on a young server (docs/redis-limit.md).
        await using (var admin = await ConnectionMultiplexer.ConnectAsync(server.Endpoint))
        {
            await KeyEpoch.SetAsync(admin.GetDatabase(), key, "simulation");
        }

        var options = fixedBudget is { } budget
            ? new RedisLimitOptions { Key = key, Budget = budget, TimeProvider = clock }
            : new RedisLimitOptions { Key = key, Adaptive = new AdaptiveBudgetOptions(), TimeProvider = clock };
        var connections = new List<ConnectionMultiplexer>();
        var limits = new List<RedisConcurrencyLimit>();
        var started = Stopwatch.GetTimestamp();
        try
        {
            for (var p = 0; p < Processes; p++)
            {
                var connection = await ConnectionMultiplexer.ConnectAsync(server.Endpoint);
                connections.Add(connection);
                limits.Add(RedisConcurrencyLimit.Create(connection, options));
            }

            await simulation.RunAsync(limits, items, duration);
            simulation.RealTime = Stopwatch.GetElapsedTime(started);
            return simulation;
        }
        finally
        {
            foreach (var limit in limits)
            {
                await limit.DisposeAsync();
            }

            foreach (var connection in connections)
            {
                await connection.DisposeAsync();
            }
        }
    }

    private static string Figures(FleetSimulation simulation) =>
        $"{simulation.Now.TotalSeconds:F1} s simulated in {simulation.RealTime.TotalSeconds:F1} s real, {simulation.Settles} settles ({simulation.SettleTime.TotalSeconds:F1} s), load average {LoadAverage()}";

    private static string LoadAverage() => File.Exists("/proc/loadavg") ? File.ReadAllText("/proc/loadavg").Split(' ')[0] : "unknown";
}
