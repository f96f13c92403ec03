using FanOut.Tests.Infrastructure;

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

    /// <summary>Answers every call in flight at one instant, each answer's worker taking the next item at once; returns how many.</summary>
    private static int AnswerTheRoundAtOnce(ConcurrencyLimit limit, Queue<long> started)
    {
        var answers = started.Count;
        for (var i = 0; i < answers; i++)
        {
            limit.RecordCompletion(started.Dequeue(), ItemOutcome.Succeeded);
            limit.Release();
            Fill(limit, started);
        }

        return answers;
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
    public void Adaptive_RangeExcludingTheDefaultStart_StartsWithinIt()
    {
        // The default start (10) is a default, not a demand: options that set only MaxLimit = 8 (or MinLimit = 12) are valid
        // and start at their bound; an InitialLimit given outside the range is still refused, naming it.
        Assert.Equal(10, new AdaptiveLimitOptions().InitialLimit);
        Assert.Equal(8, ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { MaxLimit = 8 }).Current);
        Assert.Equal(12, ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { MinLimit = 12 }).Current);
        var refused = Assert.Throws<ArgumentOutOfRangeException>(() => ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { MaxLimit = 8, InitialLimit = 10 }));
        Assert.Equal(nameof(AdaptiveLimitOptions.InitialLimit), refused.ParamName);
    }

    [Fact]
    public void Adaptive_EachCleanAnswer_RaisesTheLimitByAtMostOne()
    {
        // Slow start per acknowledgement: every answer may add one permit (a doubling per round trip), never more; and
        // answers that come back uncontended do add them, or the limit would never leave its start. Each call answers one
        // round trip after it started, in the order they started (the script used to space the first round's answers evenly
        // over a round trip: from the start of 4 that read as uncontended, from 10 it is what a queue looks like, latencies
        // of 2..20 ms for calls sent together, and the limit was rightly cut).
        var clock = new FakeTimeProvider();
        var limit = Adaptive(clock);
        var started = new Queue<long>();
        var due = new Queue<DateTimeOffset>();
        void FillDue()
        {
            while (limit.TryAcquire())
            {
                started.Enqueue(limit.RecordStart());
                due.Enqueue(clock.GetUtcNow() + s_roundTrip);
            }
        }

        FillDue();
        var initial = limit.Current;
        var before = initial;
        for (var answers = 1; answers <= 60; answers++)
        {
            var next = due.Dequeue();
            if (next > clock.GetUtcNow())
            {
                clock.AdvanceInSteps(next - clock.GetUtcNow());
            }

            limit.RecordCompletion(started.Dequeue(), ItemOutcome.Succeeded);
            limit.Release();
            Assert.True(limit.Current <= initial + answers, $"answer {answers}: {before} -> {limit.Current}, from {initial}");
            before = limit.Current;
            clock.Advance(TimeSpan.FromMicroseconds(10)); // a worker takes its next item just after the answer
            FillDue();
        }

        Assert.True(limit.Current >= initial + 30, $"60 clean answers took the limit from {initial} to {limit.Current} only");
    }

    [Fact]
    public async Task Adaptive_RoundAnsweredAtOnce_GrantsItsGrowthOverAQuarterRoundTripAndWakesAWaiter()
    {
        // A downstream of one fixed latency answers a whole round together. Each answer adds a permit to the law's limit at
        // once, but the pool grants them at slow start's pace (four times the limit per round trip), so a round does not
        // send its whole growth before the first "no" can come back. A worker waiting for a permit
        // meanwhile is woken by the pace's timer, with nothing completing.
        var clock = new FakeTimeProvider();
        var limit = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { TimeProvider = clock, InitialLimit = 8 });
        var started = new Queue<long>();
        Fill(limit, started);
        for (var round = 0; round < 2; round++)
        {
            // Each round is sent at one instant and answered at one instant, a round trip later; each answer's worker takes
            // the next item at once. The pace is given half a round trip (twice what it needs) to grant the growth.
            clock.AdvanceInSteps(round == 0 ? s_roundTrip : s_roundTrip / 2);
            var before = limit.Current;
            var answers = AnswerTheRoundAtOnce(limit, started);

            Assert.InRange(limit.Current, before, before + 1 + 1); // the rise's first permit and one more at once
            if (round == 1)
            {
                var waiter = limit.WaitAsync();
                Assert.False(waiter.IsCompleted);
                clock.Advance(s_roundTrip / 16);
                Assert.True(await waiter.WaitAsync(TimeSpan.FromSeconds(30)), "the pace's timer grants a waiting worker"); // the grant completes it asynchronously
                limit.Release();
                Assert.InRange(limit.Current, before + 3, before + answers - 1); // part of the rise, not all of it
            }

            clock.AdvanceInSteps(s_roundTrip / 2);
            Assert.True(limit.Current >= before + (answers / 2), $"round {round + 1}: {before} -> {limit.Current} after {answers} clean answers");
            Fill(limit, started);
        }
    }

    [Fact]
    public void Adaptive_PaceTimerFiringLate_GrantsAMillisecondOfTheScheduleAtOnce()
    {
        // A timer that fires 5 ms late (a loaded machine) finds 5 ms of the pace's schedule owed. Granted in one lump, that is
        // the burst the pace exists to prevent (over HTTP at a cap of 64: 71 -> 93 at once); the pace owes at most a
        // millisecond of lateness, a timer's routine resolution, and grants the rest on schedule from then on.
        var clock = new FakeTimeProvider();
        var limit = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { TimeProvider = clock, InitialLimit = 32 });
        var started = new Queue<long>();
        Fill(limit, started);
        clock.AdvanceInSteps(s_roundTrip);
        var answers = AnswerTheRoundAtOnce(limit, started);

        var atOnce = limit.Current; // the rise's first permits
        clock.Advance(s_roundTrip / 4); // one step: the timer due in half a millisecond fires 4.5 ms late

        // The pace at a grant of 34 over a 20 ms baseline is one permit per 0.15 ms: a millisecond owes about seven (and the
        // permit due next), the 4.5 ms the timer was late would owe the whole rise (26 more: 34 -> 60 when it did).
        Assert.InRange(limit.Current, atOnce + 1, atOnce + 10);
        clock.AdvanceInSteps(s_roundTrip / 2);
        Assert.True(limit.Current >= 32 + (answers / 2), $"{limit.Current} once the pace has caught up");
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
    [Fact]
    public void Adaptive_RejectionOfAnItemStartedInTheLastRound_EndsTheRampToo()
    {
        // As a fan-out runs: each answer frees a permit and the next item starts at once, so a round's burst is sent before
        // the round closes, and a rejection of it arrives for an item that started under the round before (over HTTP at a
        // hard cap of 64 the limit grew 64 -> 102, was cut to 70 and grew again to 96 on the clean answers still coming).
        var clock = new FakeTimeProvider();
        var limit = Adaptive(clock);
        var started = new Queue<long>();
        Fill(limit, started);
        long firstOfTheBurst = 0;
        for (var round = 0; round < 10 && limit.Current < 24; round++)
        {
            clock.Advance(s_roundTrip);
            firstOfTheBurst = 0;
            for (var answers = started.Count; answers > 0; answers--)
            {
                clock.Advance(TimeSpan.FromMilliseconds(0.01)); // a round's answers within a fraction of a millisecond
                limit.RecordCompletion(started.Dequeue(), ItemOutcome.Succeeded);
                limit.Release();
                var before = started.Count;
                Fill(limit, started);
                if (firstOfTheBurst == 0 && started.Count > before)
                {
                    firstOfTheBurst = started.ElementAt(before);
                }
            }
        }

        Assert.True(limit.Current >= 24, $"ten rounds of clean answers: {limit.Current}");
        Assert.NotEqual(0, firstOfTheBurst);

        clock.Advance(TimeSpan.FromMilliseconds(0.5));
        var rejected = started.ToList().IndexOf(firstOfTheBurst);
        var rest = new Queue<long>(started.Where((_, i) => i != rejected));
        started = rest;
        limit.RecordCompletion(firstOfTheBurst, ItemOutcome.Overloaded);
        limit.Release();
        var afterRejection = limit.Current;
        for (var i = 0; i < 8; i++)
        {
            clock.Advance(TimeSpan.FromMilliseconds(1));
            limit.RecordCompletion(started.Dequeue(), ItemOutcome.Succeeded);
            limit.Release();
            Fill(limit, started);
        }

        Assert.True(limit.Current <= afterRejection, $"{afterRejection} -> {limit.Current} after eight clean answers: still ramping");
    }
}
