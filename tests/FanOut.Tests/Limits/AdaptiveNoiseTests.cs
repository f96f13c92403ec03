using FanOut.Tests.Infrastructure;

using Microsoft.Extensions.Time.Testing;

namespace FanOut.Tests.Limits;

/// <summary>
/// Issue 29 item 1, pure waits in a fresh process: scheduling noise is not a queue. A latency rise within the noise floor
/// (a 1 ms timer firing late) and one stalled round (a cold process, a collection) must not end slow start; a queue, which
/// persists, still does. Rounds on a <see cref="FakeTimeProvider"/>: every call in flight answers after the same time.
/// </summary>
public sealed class AdaptiveNoiseTests
{
    private static AdaptiveConcurrencyLimit Adaptive(FakeTimeProvider clock) =>
        (AdaptiveConcurrencyLimit)ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { TimeProvider = clock });

    /// <summary>
    /// Takes every permit, lets <paramref name="latency"/> pass, and answers every call in flight; then lets half a round
    /// trip pass before the next round, in which slow start's paced growth (SlowStartPacer) is granted.
    /// </summary>
    private static void Round(AdaptiveConcurrencyLimit limit, FakeTimeProvider clock, Queue<long> started, TimeSpan latency)
    {
        while (limit.TryAcquire())
        {
            started.Enqueue(limit.RecordStart());
        }

        clock.Advance(latency);
        while (started.Count > 0)
        {
            limit.RecordCompletion(started.Dequeue(), ItemOutcome.Succeeded);
            limit.Release();
        }

        clock.AdvanceInSteps(latency / 2);
    }

    private static void GrowTo(AdaptiveConcurrencyLimit limit, FakeTimeProvider clock, Queue<long> started, TimeSpan latency, int level)
    {
        for (var round = 0; round < 20 && limit.Current < level; round++)
        {
            Round(limit, clock, started, latency);
        }

        Assert.True(limit.Current >= level && limit.InSlowStart, $"clean rounds: {limit.Current}, slow start {limit.InSlowStart}");
    }

    [BandMechanismFact]
    public void Adaptive_SlowStartRoundLateByLessThanTheNoiseFloor_KeepsGrowing()
    {
        // 1 ms timers, one round answered at 2.5 ms: 2.5x the baseline, but 1.5 ms is timer jitter on a busy machine (the
        // "2000 x Task.Delay(1)" case took 0.1-1.6 s instead of ~35 ms when this ended slow start).
        var clock = new FakeTimeProvider();
        var limit = Adaptive(clock);
        var started = new Queue<long>();
        var baseline = TimeSpan.FromMilliseconds(1);
        GrowTo(limit, clock, started, baseline, 32);
        var level = limit.Current;

        Round(limit, clock, started, baseline + AdaptiveControlLawNoiseFloor() - TimeSpan.FromMilliseconds(0.5));
        for (var round = 0; round < 3; round++)
        {
            Round(limit, clock, started, baseline);
        }

        Assert.True(limit.InSlowStart, $"slow start ended: {level} -> {limit.Current}");
        Assert.True(limit.Current >= 2 * level, $"{level} -> {limit.Current} after three clean rounds");
    }

    [BandMechanismTheory]
    [InlineData(64)]
    [InlineData(8)]
    public void Adaptive_OneStalledRoundInSlowStart_DoesNotEndIt(int level)
    {
        // 20 ms waits, one round answered after 80 ms (the process stalled), then 20 ms again: a queue cannot add 4x in one
        // round after a clean round at half the level, so the round is confirmed first, and the next one clears it. At 8,
        // the second round: a `run all` reading of 500 x Task.Delay(20) where one late timer there cut the limit to 3, and
        // 25% per window took the run from 171 ms to 1.4 s (a small round is confirmed as a large one is).
        var clock = new FakeTimeProvider();
        var limit = Adaptive(clock);
        var started = new Queue<long>();
        var roundTrip = TimeSpan.FromMilliseconds(20);
        GrowTo(limit, clock, started, roundTrip, level);
        var reached = limit.Current;

        Round(limit, clock, started, 4 * roundTrip);
        for (var round = 0; round < 3; round++)
        {
            Round(limit, clock, started, roundTrip);
        }

        // The confirming round does not grow; the two after it do (these rounds answer all at once without refilling, so a
        // round grows the limit by about a third, not a doubling). A cut would leave it at a quarter of the level.
        Assert.True(limit.InSlowStart, $"slow start ended: {reached} -> {limit.Current}");
        Assert.True(limit.Current >= reached + (reached / 2), $"{reached} -> {limit.Current} after three clean rounds");
    }

    [BandMechanismFact]
    public void Adaptive_QueueThatPersistsInSlowStart_EndsItAfterTheConfirmingRound()
    {
        // The same jump, but it stays: the confirming round holds the limit (no growth while it runs) and reads it again,
        // and slow start ends with the limit cut below the level that queued.
        var clock = new FakeTimeProvider();
        var limit = Adaptive(clock);
        var started = new Queue<long>();
        var roundTrip = TimeSpan.FromMilliseconds(20);
        GrowTo(limit, clock, started, roundTrip, 64);
        var level = limit.Current;

        Round(limit, clock, started, 4 * roundTrip);
        var held = limit.Current;
        Round(limit, clock, started, 4 * roundTrip);

        Assert.True(held <= level, $"{level} -> {held} while confirming");
        Assert.False(limit.InSlowStart, $"a persistent 4x still in slow start at {limit.Current}");
        Assert.True(limit.Current < level, $"{level} -> {limit.Current}");
    }

    [BandMechanismFact]
    public void Adaptive_QueueThatEndedSlowStart_IsNeverRefuted()
    {
        // A downstream serving 16 at once and queueing the rest (latency in proportion to the calls beyond 16): the round
        // that ends slow start reads a real queue, so the windows after it must not resume slow start, even once a slow
        // spell (three rounds at 3x) has backed the limit off below the capacity: a window there reads no queue, but it is
        // below the level that queued, so it refutes nothing, and the limit climbs back to about 16 by the band.
        const int capacity = 16;
        var clock = new FakeTimeProvider();
        var limit = Adaptive(clock);
        var started = new Queue<long>();
        var roundTrip = TimeSpan.FromMilliseconds(20);
        TimeSpan Queued(int inFlight) => roundTrip * Math.Max(1.0, (double)inFlight / capacity);
        for (var round = 0; round < 30 && limit.InSlowStart; round++)
        {
            Round(limit, clock, started, Queued(limit.Current));
        }

        Assert.False(limit.InSlowStart, $"a queue at {capacity} did not end slow start: {limit.Current}");
        var levels = new List<int>();
        for (var round = 0; round < 200; round++)
        {
            Round(limit, clock, started, Queued(limit.Current) * (round is >= 20 and < 23 ? 3 : 1));
            levels.Add(limit.Current);
            Assert.False(limit.InSlowStart, $"slow start resumed at round {round}: {string.Join(" ", levels)}");
        }

        Assert.All(levels.Skip(100), l => Assert.InRange(l, 0.7 * capacity, 1.5 * capacity));
    }

    private static TimeSpan AdaptiveControlLawNoiseFloor() => FanOut.Limits.Adaptive.AdaptiveControlLaw.NoiseFloor;
}
