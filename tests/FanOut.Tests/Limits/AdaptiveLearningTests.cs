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
}
