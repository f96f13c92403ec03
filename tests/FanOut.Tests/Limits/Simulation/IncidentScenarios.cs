namespace FanOut.Tests.Limits.Simulation;

/// <summary>
/// Issue 29 item 2's incidents, written once for every place the law works: each incident's script, how long it runs, and
/// the targets read from a run's timeline and calls. The suite's IncidentScenarioTests runs them
/// against each LawPlace; FanOut.Redis.Tests' FleetIncidentScenarioTests (which links this file) against
/// the fleet's budget.
/// </summary>
public static class IncidentScenarios
{
    /// <summary>The downstream's latency in every incident.</summary>
    public static readonly TimeSpan Latency = TimeSpan.FromMilliseconds(20);

    /// <summary>When the capacity halves (64 -> 32) and when it recovers.</summary>
    public static readonly TimeSpan Halved = TimeSpan.FromSeconds(3), HalvingRecovered = TimeSpan.FromSeconds(6);

    /// <summary>When the long low (64 -> 4) begins and when it recovers.</summary>
    public static readonly TimeSpan Low = TimeSpan.FromSeconds(2), LowRecovered = TimeSpan.FromSeconds(22);

    /// <summary>When the Retry-After storm begins and when it ends.</summary>
    public static readonly TimeSpan Storm = TimeSpan.FromSeconds(2), Calm = TimeSpan.FromSeconds(3);

    /// <summary>How long each phased incident runs.</summary>
    public static readonly TimeSpan HalvingRun = TimeSpan.FromSeconds(9), LongLowRun = TimeSpan.FromSeconds(26), StormRun = TimeSpan.FromSeconds(6);

    /// <summary>A hard cap: <paramref name="capacity"/> at once, 429 beyond it, at once.</summary>
    public static DownstreamState HardCap(int capacity) => new() { Capacity = capacity, Queue = 0, Latency = Latency };

    /// <summary>64 at once, then 32 from 3 s to 6 s, then 64 again.</summary>
    /// <summary>A hard cap whose every 429 carries "Retry-After: 1", as many APIs send: the hint is the refused call's, not a storm.</summary>
    public static DownstreamScript HardCapWithRetryAfter(int capacity) => DownstreamScript.Constant(HardCap(capacity) with { RefusalRetryAfter = TimeSpan.FromSeconds(1) });

    public static DownstreamScript Halving() => DownstreamScript.Phases((TimeSpan.Zero, HardCap(64)), (Halved, HardCap(32)), (HalvingRecovered, HardCap(64)));

    /// <summary>64, then 4 for 20 s (probes keep being rejected, so they are spaced out), then 64 again.</summary>
    public static DownstreamScript LongLow() => DownstreamScript.Phases((TimeSpan.Zero, HardCap(64)), (Low, HardCap(4)), (LowRecovered, HardCap(64)));

    /// <summary>From 2 s to 3 s every call is answered 429 with Retry-After: 1 s (an API pausing its clients).</summary>
    public static DownstreamScript RetryAfterStorm() => DownstreamScript.Phases(
        (TimeSpan.Zero, HardCap(64)),
        (Storm, HardCap(64) with { RetryAfter = TimeSpan.FromSeconds(1) }),
        (Calm, HardCap(64)));

    /// <summary>p99 = 10x the median, a downstream with room for everything: the tail must not read as congestion.</summary>
    /// <summary>Over <see cref="DegradationSpan"/> the capacity falls 64 -> 8 while latency rises 20 -> 200 ms; the downstream queues instead of rejecting.</summary>
    public static DownstreamScript SlowDegradation() => new(at =>
    {
        var f = Math.Clamp(at / DegradationSpan, 0, 1);
        return new DownstreamState { Capacity = (int)Math.Round(64 - (56 * f)), Queue = 100_000, Latency = TimeSpan.FromMilliseconds(20 + (180 * f)) };
    });

    /// <summary>64 -> 32 from <see cref="Halved"/> to <see cref="HalvingRecovered"/> on a heavy tail (20 ms, p99 10x), behind a hard cap or a queue as deep.</summary>
    public static DownstreamScript HalvingOnAHeavyTail(bool queue)
    {
        var state = new DownstreamState { Latency = TimeSpan.FromMilliseconds(20), Shape = LatencyShape.HeavyTail };
        var depth = queue ? 1 : 0;
        return DownstreamScript.Phases(
            (TimeSpan.Zero, state with { Capacity = 64, Queue = 64 * depth }),
            (Halved, state with { Capacity = 32, Queue = 32 * depth }),
            (HalvingRecovered, state with { Capacity = 64, Queue = 64 * depth }));
    }

    /// <summary>A downstream of 64 and a queue of 64 that stops for 100 ms every second (a collection, a failover).</summary>
    public static DownstreamScript PeriodicStalls() => DownstreamScript.Constant(new DownstreamState
    {
        Capacity = 64,
        Queue = 64,
        StallEvery = TimeSpan.FromSeconds(1),
        StallFor = TimeSpan.FromMilliseconds(100),
    });

    /// <summary>How long <see cref="SlowDegradation"/> takes to reach its last capacity, 8.</summary>
    public static readonly TimeSpan DegradationSpan = TimeSpan.FromSeconds(30);

    public static DownstreamScript HeavyTail() => DownstreamScript.Constant(new DownstreamState { Capacity = 100_000, Queue = 0, Latency = Latency, Shape = LatencyShape.HeavyTail });

    /// <summary>
    /// The halving's targets: settled within ±25% of 32 within a second, at most 3% of calls rejected after settling, back to
    /// 48 within 3 s of the recovery. <paramref name="context"/> goes into every failure message, after the readings.
    /// </summary>
    public static void AssertHalving(IReadOnlyList<TimelineSample> timeline, IReadOnlyList<(TimeSpan At, bool Rejected)> calls, Action<string> output, string context = "")
    {
        var settled = timeline.SettledFrom(Halved, HalvingRecovered, 0.75 * 32, 1.25 * 32);
        var after = calls.Where(c => c.At >= settled && c.At < HalvingRecovered).ToArray();
        var back = timeline.FirstOrDefault(s => s.At >= HalvingRecovered && s.Limit >= 0.75 * 64).At;
        var readings = $"settled {(settled - Halved)?.TotalSeconds:F2} s after the halving, {after.Count(c => c.Rejected)} of {after.Length} calls rejected after, back to 48 {(back - HalvingRecovered).TotalSeconds:F2} s after the recovery; {context}{timeline.Describe(Halved - TimeSpan.FromSeconds(0.5), HalvingRecovered + TimeSpan.FromSeconds(3))}";
        output(readings);
        Assert.NotNull(settled);
        Assert.True(settled - Halved <= TimeSpan.FromSeconds(1), readings);
        Assert.True(after.Count(c => c.Rejected) <= 0.03 * after.Length, readings);
        Assert.True(back > HalvingRecovered && back - HalvingRecovered <= TimeSpan.FromSeconds(3), readings);
    }

    /// <summary>The long low's target: back to half the capacity (32) within 3 s of the recovery.</summary>
    public static void AssertLongLow(IReadOnlyList<TimelineSample> timeline, IReadOnlyList<(TimeSpan At, bool Rejected)> calls, Action<string> output, string context = "")
    {
        var back = timeline.FirstOrDefault(s => s.At >= LowRecovered && s.Limit >= 32).At;
        var lowCalls = calls.Where(c => c.At >= Low + TimeSpan.FromSeconds(1) && c.At < LowRecovered).ToArray();
        var readings = $"back to 32 {(back - LowRecovered).TotalSeconds:F2} s after the recovery; {lowCalls.Count(c => c.Rejected)} of {lowCalls.Length} calls rejected during the low; {context}{timeline.Describe(LowRecovered - TimeSpan.FromSeconds(1), LowRecovered + TimeSpan.FromSeconds(4))}";
        output(readings);
        Assert.True(back > LowRecovered && back - LowRecovered <= TimeSpan.FromSeconds(3), readings);
    }

    /// <summary>
    /// The storm's targets: no item failed, about the limit's own size sent during the pause, and once it has passed the limit
    /// back near its level before at once (a pause is not a capacity signal: one back-off, not 1).
    /// </summary>
    public static void AssertStorm(IReadOnlyList<TimelineSample> timeline, IReadOnlyList<(TimeSpan At, bool Rejected)> calls, int failedItems, Action<string> output, string context = "")
    {
        var before = timeline.Last(s => s.At < Storm).Limit;
        var during = calls.Count(c => c.At >= Storm && c.At < Calm);
        var resumed = timeline.First(s => s.At >= Calm && s.Limit > 0);
        var readings = $"limit {before} before the storm, {during} calls during it, {resumed.Limit} at {resumed.At.TotalSeconds:F3} s, {failedItems} items failed; {context}{timeline.Describe(Storm - TimeSpan.FromSeconds(0.25), Calm + TimeSpan.FromSeconds(1))}";
        output(readings);
        Assert.True(failedItems == 0, readings);
        Assert.True(during <= (1.25 * before) + 8, readings);
        Assert.True(resumed.At - Calm <= TimeSpan.FromMilliseconds(50) && resumed.Limit >= 0.75 * before, readings);
    }
}
