using Xunit.Abstractions;

namespace FanOut.Tests.Limits.Simulation;

/// <summary>
/// Issue 29 item 1, pure waits on a loaded machine: the first rounds' timers fire late (a starved CPU), which slow start
/// reads as a queue and leaves at a low limit; then the timers fire on time again. Fresh limits at each place the law
/// works, on a <see cref="Microsoft.Extensions.Time.Testing.FakeTimeProvider"/>. A stall should cost about the stall, not
/// the rest of the run: the bar is twice the same limit's time on timers that never stall. (Fixed(256) is printed beside
/// it; with no JIT to pay in simulated time even a clean run is 3x Fixed(256) here, against about 2x in a fresh process.)
/// </summary>
public sealed class StalledStartScenarioTests(ITestOutputHelper output)
{
    private static readonly TimeSpan s_timer = TimeSpan.FromMilliseconds(20);

    /// <summary>20 ms timers with room for everything, firing 10 ms late for calls that start from <paramref name="from"/> until <paramref name="until"/>.</summary>
    private static DownstreamScript LateTimers(TimeSpan from, TimeSpan until) => new(at => new DownstreamState
    {
        Capacity = 100_000,
        Queue = 0,
        Latency = at >= from && at < until ? s_timer + TimeSpan.FromMilliseconds(10) : s_timer,
    });

    private static (LimitSimulation Simulation, ConcurrencyLimit Limit) Run(DownstreamScript script, LawPlace place, ConcurrencyLimit? limit = null)
    {
        var simulation = new LimitSimulation(script) { CallSize = place.CallSize };
        limit ??= place.Create(simulation);
        simulation.Run(limit, items: 500);
        Assert.Equal(500, simulation.SucceededItems);
        return (simulation, limit);
    }

    [Theory]
    [MemberData(nameof(LawPlace.Names), MemberType = typeof(LawPlace))]
    public void Adaptive_EarlyRoundsStalledThenCleanTimers_CostsTheStallNotTheRun(string place)
    {
        // 500 x 20 ms timers; the first answers come back at 20 ms, and the calls of the next two rounds (20-60 ms) take
        // 30 ms: slow start reads a queue at 4 and is cut to 3. Before slow start could resume, the limit climbed one
        // permit per 32-answer window from there (11 round trips per step at 3): 932 ms, 5.6x the run without the stall.
        var where = LawPlace.Named(place);
        var stalled = LateTimers(s_timer, s_timer + TimeSpan.FromMilliseconds(40));
        var (adaptive, limit) = Run(stalled, where);
        var (clean, _) = Run(LateTimers(TimeSpan.Zero, TimeSpan.Zero), where);
        var (best, _) = Run(stalled, where, ConcurrencyLimit.Fixed(256));

        var context = $"{place}: {adaptive.Elapsed.TotalMilliseconds:F0} ms, {adaptive.Elapsed / best.Elapsed:F2}x Fixed(256)'s "
            + $"{best.Elapsed.TotalMilliseconds:F0} ms, {adaptive.Elapsed / clean.Elapsed:F2}x its own {clean.Elapsed.TotalMilliseconds:F0} ms "
            + $"without the stall; peak {limit.Peak}; {string.Join(" ", adaptive.Timeline.Select(s => $"{s.At.TotalMilliseconds:F0}:{s.Limit}"))}";
        output.WriteLine(context);
        Assert.True(adaptive.Elapsed <= 2 * clean.Elapsed, context);
    }
}
