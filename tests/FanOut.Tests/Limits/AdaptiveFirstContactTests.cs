using Microsoft.Extensions.Time.Testing;

namespace FanOut.Tests.Limits;

/// <summary>
/// Issue 29 item 1: before anything has answered, the adaptive limit may not outrun the evidence. It starts small, grows
/// by at most one per answer (TCP's slow start per acknowledgement), and a rejection ends the ramp at once. On a
/// <see cref="FakeTimeProvider"/>: time passes only when a test says so.
/// </summary>
public sealed class AdaptiveFirstContactTests
{
    private static readonly TimeSpan s_roundTrip = TimeSpan.FromMilliseconds(20);

    private static ConcurrencyLimit Adaptive(FakeTimeProvider clock) =>
        ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { TimeProvider = clock });

    /// <summary>Takes every permit the limit grants, as a fan-out's workers do; returns the start timestamps.</summary>
    private static void Fill(ConcurrencyLimit limit, Queue<long> started)
    {
        while (limit.TryAcquire())
        {
            started.Enqueue(limit.RecordStart());
        }
    }

    [Fact]
    public void Adaptive_NothingAnswered_SendsNoMoreThanTheInitialLimit()
    {
        // A cold HTTP stack takes 28-150 ms to answer: before the first answer, time alone must not raise the limit.
        var clock = new FakeTimeProvider();
        var limit = Adaptive(clock);
        var started = new Queue<long>();
        for (var ms = 0; ms < 200; ms++)
        {
            Fill(limit, started);
            clock.Advance(TimeSpan.FromMilliseconds(1));
        }

        var initial = new AdaptiveLimitOptions().InitialLimit;
        Assert.InRange(initial, 2, 10); // a small start: Envoy pins 3 while it measures, TCP starts at 10 segments
        Assert.Equal(initial, started.Count);
        Assert.Equal(initial, limit.Current);
    }

    [Fact]
    public void Adaptive_EachCleanAnswer_RaisesTheLimitByAtMostOne()
    {
        // Slow start per acknowledgement: every answer may add one permit (a doubling per round trip), never more; and
        // answers that come back uncontended do add them, or the limit would never leave its start.
        var clock = new FakeTimeProvider();
        var limit = Adaptive(clock);
        var started = new Queue<long>();
        Fill(limit, started);
        var initial = limit.Current;
        var before = initial;
        for (var answers = 1; answers <= 60; answers++)
        {
            clock.Advance(s_roundTrip / started.Count);
            limit.RecordCompletion(started.Dequeue(), ItemOutcome.Succeeded);
            limit.Release();
            Assert.True(limit.Current <= before + 1, $"answer {answers}: {before} -> {limit.Current}");
            before = limit.Current;
            Fill(limit, started);
        }

        Assert.True(limit.Current >= initial + 30, $"60 clean answers took the limit from {initial} to {limit.Current} only");
    }

    [Fact]
    public void Adaptive_FirstRejection_EndsTheRampAtOnce()
    {
        // Grow on clean answers (rounds of 20 ms) to 12 or more, then the downstream rejects one call: the ramp is over, and
        // the limit is below the calls still in flight (the downstream said no with them running).
        var clock = new FakeTimeProvider();
        var limit = Adaptive(clock);
        var started = new Queue<long>();
        Fill(limit, started);
        for (var round = 0; round < 10 && limit.Current < 12; round++)
        {
            clock.Advance(s_roundTrip);
            for (var answers = started.Count; answers > 0; answers--)
            {
                limit.RecordCompletion(started.Dequeue(), ItemOutcome.Succeeded);
                limit.Release();
            }

            Fill(limit, started);
        }

        Assert.True(limit.Current >= 12, $"ten rounds of clean answers: {limit.Current}");

        clock.Advance(TimeSpan.FromMilliseconds(0.5));
        var inFlight = limit.InFlight;
        limit.RecordCompletion(started.Dequeue(), ItemOutcome.Overloaded);
        limit.Release();
        var afterRejection = limit.Current;
        Fill(limit, started);
        for (var i = 0; i < 4; i++)
        {
            clock.Advance(TimeSpan.FromMilliseconds(2));
            limit.RecordCompletion(started.Dequeue(), ItemOutcome.Succeeded);
            limit.Release();
        }

        Assert.True(afterRejection < inFlight, $"{afterRejection} with {inFlight} in flight");
        Assert.True(limit.Current <= afterRejection + 1, $"{afterRejection} -> {limit.Current} after four answers: still ramping");
    }
}
