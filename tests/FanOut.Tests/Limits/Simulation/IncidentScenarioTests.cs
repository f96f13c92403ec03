using Xunit.Abstractions;

namespace FanOut.Tests.Limits.Simulation;

/// <summary>
/// Issue 29 item 2 on the simulation suite: long incidents against a fresh adaptive limit at each place the law works
/// (<see cref="LawPlace"/>: the loop's default, FanOut.Http's per host, a shared limit, the server's admission), each on
/// a scripted downstream and a <see cref="Microsoft.Extensions.Time.Testing.FakeTimeProvider"/> (a run of 30 simulated
/// seconds takes well under a second). The targets are the issue's.
/// </summary>
public sealed class IncidentScenarioTests(ITestOutputHelper output)
{
    private static (LimitSimulation Simulation, ConcurrencyLimit Limit) Run(DownstreamScript script, TimeSpan duration, int items = int.MaxValue, string place = "loop")
    {
        var where = LawPlace.Named(place);
        var simulation = new LimitSimulation(script) { CallSize = where.CallSize };
        var limit = where.Create(simulation);
        simulation.Run(limit, items, duration);
        return (simulation, limit);
    }

    [Theory]
    [MemberData(nameof(LawPlace.Names), MemberType = typeof(LawPlace))]
    public void Adaptive_CapacityHalvesAndRecovers_SettlesWithinASecondAndRejectsLittleAfter(string place)
    {
        var (simulation, _) = Run(IncidentScenarios.Halving(), IncidentScenarios.HalvingRun, place: place);

        IncidentScenarios.AssertHalving(simulation.Timeline, simulation.Calls, output.WriteLine, $"{place}: ");
    }

    [Theory]
    [MemberData(nameof(LawPlace.Names), MemberType = typeof(LawPlace))]
    public void Adaptive_RecoveryAfterALongLow_IsBackToHalfTheCapacityWithinThreeSeconds(string place)
    {
        var (simulation, _) = Run(IncidentScenarios.LongLow(), IncidentScenarios.LongLowRun, place: place);

        IncidentScenarios.AssertLongLow(simulation.Timeline, simulation.Calls, output.WriteLine, $"{place}: ");
    }

    [Theory]
    [MemberData(nameof(LawPlace.Names), MemberType = typeof(LawPlace))]
    public void Adaptive_SlowDegradationWithQueueing_EndsWithinTwiceTheCapacity(string place)
    {
        // Over 30 s capacity falls 64 -> 8 while latency rises 20 -> 200 ms; the downstream queues instead of rejecting.
        // Before the growth test (a step that raised latency with the limit stops re-measuring the baseline at that level),
        // the baseline re-measured at half the clean level drifted up with the queue: in flight ended at 30 at every place.
        var span = IncidentScenarios.DegradationSpan;
        var (simulation, limit) = Run(IncidentScenarios.SlowDegradation(), span + TimeSpan.FromSeconds(2), place: place);

        var end = simulation.Timeline.Where(s => s.At >= span).ToArray();
        var inFlight = end.Average(s => s.InFlight);
        var context = $"{place}: in flight {inFlight:F1} over the last 2 s, limit {limit.Current}; {simulation.Timeline.Describe(TimeSpan.Zero, span + TimeSpan.FromSeconds(2), 2)}";
        output.WriteLine(context);
        Assert.True(simulation.FailedItems == 0, $"{simulation.FailedItems} items failed; " + context);
        Assert.True(inFlight <= 2 * 8, context);
    }

    [Theory]
    [MemberData(nameof(LawPlace.Names), MemberType = typeof(LawPlace))]
    public void Adaptive_OneStalledRoundInSlowStart_CostsLittleMoreThanTheStall(string place)
    {
        // 5,000 waits of 20 ms with room for everything; the calls started in one 20 ms spell while slow start ramps answer
        // after 80 ms instead (a stalled process, a collection). A stall is not a queue: on the real clock one late timer
        // once cut the limit to 3 and took 500 waits from 171 ms to 1.4 s. Target: the run with the stall takes at most the
        // 60 ms it adds and a quarter of the run without it, in every seed. The band: 4-16% (its confirming round). The staged
        // law: 36-70% when one reading at twice the least ended slow start; 1-3% now that a reading of items started after
        // it must read the queue too, but FanOut.Http's place 51% in 1 seed of 20 (its full-pipe test ends slow start there).
        var (worst, context) = ShapeMeasurement.StallCost(LawPlace.Named(place));
        output.WriteLine($"{place}: worst cost beyond the stall {worst:P0}; {context}");
        Assert.True(worst <= 0.25, $"{place}: {worst:P0}; {context}");
    }

    [Theory]
    [MemberData(nameof(LawPlace.Names), MemberType = typeof(LawPlace))]
    public void Adaptive_RetryAfterStorm_FailsNoItemAndSendsAboutItsOwnSizeDuringThePause(string place)
    {
        var (simulation, _) = Run(IncidentScenarios.RetryAfterStorm(), IncidentScenarios.StormRun, place: place);

        IncidentScenarios.AssertStorm(simulation.Timeline, simulation.Calls, simulation.FailedItems, output.WriteLine, $"{place}: ");
    }

    [Theory]
    [MemberData(nameof(LawPlace.Names), MemberType = typeof(LawPlace))]
    public void Adaptive_HeavyTailedLatencyWithoutOverload_KeepsFourFifthsOfFixedMaxThroughput(string place)
    {
        var script = IncidentScenarios.HeavyTail();
        var (adaptive, limit) = Run(script, TimeSpan.MaxValue, items: 20_000, place: place);
        // Fixed(256) served the same way (calls of the same size, so a shared limit's calls each wait for their own tail).
        var best = new LimitSimulation(script) { CallSize = LawPlace.Named(place).CallSize };
        best.Run(ConcurrencyLimit.Fixed(256), 20_000);

        var ratio = best.Elapsed / adaptive.Elapsed;
        output.WriteLine($"{ratio:F2}x Fixed(256)'s throughput; limit {limit.Current}, peak {limit.Peak}");
        Assert.True(ratio >= 0.8, $"{ratio:F2}x Fixed(256)'s throughput; limit {limit.Current}, peak {limit.Peak}");
    }
}
