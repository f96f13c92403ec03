using System.Diagnostics.Metrics;

using FanOut.Diagnostics;
using FanOut.Tests.Diagnostics;
using FanOut.Tests.Infrastructure;

namespace FanOut.Tests.Limits;

/// <summary>Issue 17 item 5: the adaptive limit learns the same whatever else is on (a metrics listener, an earlier canceled call).</summary>
[Collection(nameof(SerialCollection))]
public sealed class AdaptiveLearningTests
{
    [Fact]
    public async Task Adaptive_DurationHistogramListenedTo_SettlesAsWithNoListener()
    {
        // A downstream of 4 slots (requests queue beyond), 2 ms of service each: the limit should settle near 4, not run up.
        var quiet = await SettledLimitAsync(listen: false);
        var listened = await SettledLimitAsync(listen: true);

        Assert.InRange(quiet, 1, 16);
        Assert.InRange(listened, 1, 16);
    }

    [Theory]
    [InlineData("canceled")]
    [InlineData("failed fast")]
    public async Task Adaptive_FirstCallEndsWhileItsFirstItemsRun_NextCallStillMeasuresABaseline(string ending)
    {
        var limit = (AdaptiveConcurrencyLimit)ConcurrencyLimit.Adaptive();
        var options = new FanOutOptions { Limit = limit };
        using var cts = new CancellationTokenSource();
        var started = 0;
        var first = Enumerable.Range(0, 100).ToArray().FanOutAsync(
            async (i, ct) =>
            {
                if (Interlocked.Increment(ref started) == 4 && ending == "failed fast")
                {
                    throw new InvalidOperationException("the first call fails fast");
                }

                await Task.Delay(Timeout.Infinite, ct);
            },
            options,
            cts.Token);
        await Wait.UntilAsync(() => Volatile.Read(ref started) >= 4, "the first window's items started");
        if (ending == "canceled")
        {
            await cts.CancelAsync();
        }

        await first.Settled();
        Assert.Equal(TimeSpan.Zero, limit.Baseline);

        await Enumerable.Range(0, 200).ToArray().FanOutAsync(async (_, ct) => await Task.Delay(1, ct), options).WithTimeout();
        Assert.True(limit.Baseline > TimeSpan.Zero, "the second call measured a baseline");
    }

    [BandMechanismFact]
    public void Adaptive_WorkerPreemptedBetweenItsClockReadingAndItsCount_FirstWindowStillCloses()
    {
        // The third of the first window's four starts reads the clock; before it is counted, a fourth worker starts on
        // another thread (a preempted worker on a loaded machine). Counted apart from its clock reading, the third fixed the
        // window's end before the fourth's start: three items could ever fill a window of four, and the limit held its
        // initial value with no baseline for good (a CI run watched it sit at 4 for a minute).
        var clock = new InterruptibleClock();
        var limit = (AdaptiveConcurrencyLimit)ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { InitialLimit = 4, TimeProvider = clock });
        var starts = new List<long> { limit.RecordStart(), limit.RecordStart() };
        Thread? fourth = null;
        long fourthStart = 0;
        clock.Interrupt = () =>
        {
            fourth = new Thread(() => fourthStart = limit.RecordStart());
            fourth.Start();

            // Until the fourth has started, or waits for the third to be counted.
            while (fourth.IsAlive && (fourth.ThreadState & ThreadState.WaitSleepJoin) == 0)
            {
                Thread.Yield();
            }
        };
        starts.Add(limit.RecordStart());
        fourth!.Join();
        starts.Add(fourthStart);

        clock.Advance(TimeSpan.FromMilliseconds(10));
        foreach (var start in starts)
        {
            limit.RecordCompletion(start, ItemOutcome.Succeeded);
        }

        Assert.NotEqual(TimeSpan.Zero, limit.Baseline);
    }

    [BandMechanismFact]
    public void Adaptive_ItemsStartedInTheTickTheFirstWindowReopened_FirstWindowStillCloses()
    {
        // A canceled item reopens the first window after now: starts in the same tick belong to the abandoned one. Counted
        // toward the new window, they fixed its end before its start (an empty window), and no baseline ever came.
        var clock = new ManualTimeProvider();
        var limit = (AdaptiveConcurrencyLimit)ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { InitialLimit = 4, TimeProvider = clock });
        limit.RecordCompletion(limit.RecordStart(), ItemOutcome.Canceled);
        var sameTick = Enumerable.Range(0, 4).Select(_ => limit.RecordStart()).ToList();
        clock.Advance(TimeSpan.FromMilliseconds(1));
        var later = Enumerable.Range(0, 4).Select(_ => limit.RecordStart()).ToList();

        clock.Advance(TimeSpan.FromMilliseconds(10));
        foreach (var start in sameTick.Concat(later))
        {
            limit.RecordCompletion(start, ItemOutcome.Succeeded);
        }

        Assert.NotEqual(TimeSpan.Zero, limit.Baseline);
    }

    [Fact]
    public void Adaptive_OneOfTheFirstItemsHangs_TheLimitStillLearns()
    {
        // The first of a call's items hangs (a connection that times out after minutes) while the others answer in 1-10 ms.
        // The first window waited for all four of its items, so the limit measured nothing and held its initial value for
        // as long as the one item hung. Once three have answered and the fourth has been out longer than any of them, it is
        // the slowest whatever it takes: the window's median is known.
        var clock = new ManualTimeProvider();
        var limit = (AdaptiveConcurrencyLimit)ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { TimeProvider = clock });
        _ = limit.RecordStart(); // never answers
        var running = new Queue<long>();
        var slowest = TimeSpan.Zero;
        for (var step = 0; step < 2_000 && limit.Baseline == TimeSpan.Zero; step++)
        {
            while (running.Count + 1 < limit.Current)
            {
                clock.Advance(TimeSpan.FromTicks(1)); // starts one after another, as workers take items
                running.Enqueue(limit.RecordStart());
            }

            clock.Advance(TimeSpan.FromMilliseconds(1));
            var start = running.Dequeue();
            slowest = TimeSpan.FromTicks(Math.Max(slowest.Ticks, clock.GetTimestamp() - start));
            limit.RecordCompletion(start, ItemOutcome.Succeeded);
        }

        Assert.InRange(limit.Baseline, TimeSpan.FromTicks(1), slowest);
    }

    private static async Task<int> SettledLimitAsync(bool listen)
    {
        using var listener = new MeterListener();
        if (listen)
        {
            // What AddMeter("FanOut") in OpenTelemetry does: listen to every instrument of the meter, the histogram included.
            listener.InstrumentPublished = (instrument, l) =>
            {
                if (instrument.Meter.Name == FanOutInstruments.MeterName)
                {
                    l.EnableMeasurementEvents(instrument);
                }
            };
            listener.Start();
        }

        using var slots = new SemaphoreSlim(4);
        var limit = ConcurrencyLimit.Adaptive();
        await Enumerable.Range(0, 3000).ToArray().FanOutAsync(
            async (_, ct) =>
            {
                await slots.WaitAsync(ct);
                try
                {
                    await Task.Delay(2, ct);
                }
                finally
                {
                    slots.Release();
                }
            },
            new FanOutOptions { Limit = limit }).WaitAsync(TimeSpan.FromSeconds(60));
        return limit.Current;
    }

    /// <summary>A clock advanced by hand whose next reading runs <see cref="Interrupt"/> between reading and returning (once).</summary>
    private sealed class InterruptibleClock : TimeProvider
    {
        private long _ticks = TimeSpan.TicksPerDay;
        private Action? _interrupt;

        public Action? Interrupt { set => Volatile.Write(ref _interrupt, value); }

        public override long TimestampFrequency => TimeSpan.TicksPerSecond;

        public override long GetTimestamp()
        {
            var ticks = Interlocked.Increment(ref _ticks);
            Interlocked.Exchange(ref _interrupt, null)?.Invoke();
            return ticks;
        }

        public void Advance(TimeSpan by) => Interlocked.Add(ref _ticks, by.Ticks);
    }
}
