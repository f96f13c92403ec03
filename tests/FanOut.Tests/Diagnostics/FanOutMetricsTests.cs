using System.Collections.Concurrent;
using System.Diagnostics.Metrics;

using FanOut.Diagnostics;
using FanOut.Tests.Infrastructure;

namespace FanOut.Tests.Diagnostics;

/// <summary>Tests that must run alone: the meter is process-wide (no other test's items may be counted) and real timers must not compete with a busy test run.</summary>
[CollectionDefinition(nameof(SerialCollection), DisableParallelization = true)]
public sealed class SerialCollection;

[Collection(nameof(SerialCollection))]
public sealed class FanOutMetricsTests : IDisposable
{
    private readonly MeterListener _listener = new();
    private readonly ConcurrentQueue<(string Instrument, double Value, string? Kind, string? Name)> _measurements = new();

    public FanOutMetricsTests()
    {
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Name == FanOutInstruments.MeterName)
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.SetMeasurementEventCallback<long>((i, v, tags, _) => Record(i, v, tags));
        _listener.SetMeasurementEventCallback<int>((i, v, tags, _) => Record(i, v, tags));
        _listener.SetMeasurementEventCallback<double>((i, v, tags, _) => Record(i, v, tags));
        _listener.Start();
    }

    public void Dispose() => _listener.Dispose();

    [Fact]
    public async Task Metrics_RunAllWithFailures_CountCompletedFailedDurationsAndInFlight()
    {
        var task = Enumerable.Range(0, 20).ToArray().FanOutAsync(async (i, ct) =>
        {
            await Task.Yield();
            return i % 10 == 0 ? throw new InvalidOperationException() : i;
        }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(3), Errors = ErrorMode.RunAll });
        await task.Settled();

        Assert.Equal(18, Sum(FanOutInstruments.ItemsCompleted));
        Assert.Equal(2, Sum(FanOutInstruments.ItemsFailed));
        Assert.Equal(20, Values(FanOutInstruments.ItemDuration).Length);
        Assert.All(Values(FanOutInstruments.ItemDuration), d => Assert.True(d >= 0));

        // In flight: +1/-1 per item, never above the limit, back to 0 at the end.
        var running = 0.0;
        var max = 0.0;
        foreach (var delta in Values(FanOutInstruments.ItemsInFlight))
        {
            running += delta;
            max = Math.Max(max, running);
        }

        Assert.Equal(0, running);
        Assert.InRange(max, 1, 3);
        Assert.Contains(3, Values(FanOutInstruments.LimitCurrent));
        Assert.All(_measurements, m => Assert.Equal("fixed", m.Kind));
        Assert.All(_measurements, m => Assert.Null(m.Name)); // an unnamed limit adds no name tag
    }

    [Fact]
    public async Task Metrics_TwoNamedLimits_EveryMeasurementTellsThemApartByName()
    {
        // Issue 39 item 1: two adaptive limits of one process, told apart in the metrics as in fanout watch.
        var orders = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { Name = "orders" });
        var payments = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { Name = "payments" });
        await Task.WhenAll(
            Enumerable.Range(0, 30).FanOutAsync(async (i, ct) => await Task.Yield(), new FanOutOptions { Limit = orders }),
            Enumerable.Range(0, 20).FanOutAsync(async (i, ct) => await Task.Yield(), new FanOutOptions { Limit = payments })).WithTimeout();

        foreach (var instrument in new[] { FanOutInstruments.LimitCurrent, FanOutInstruments.ItemsInFlight, FanOutInstruments.ItemsCompleted, FanOutInstruments.ItemDuration })
        {
            var byName = _measurements.Where(m => m.Instrument == instrument).GroupBy(m => m.Name).ToDictionary(g => g.Key ?? "(none)", g => g.ToList());
            Assert.Equal(["orders", "payments"], byName.Keys.Order());
        }

        Assert.Equal(30, _measurements.Where(m => m.Instrument == FanOutInstruments.ItemsCompleted && m.Name == "orders").Sum(m => m.Value));
        Assert.Equal(20, _measurements.Where(m => m.Instrument == FanOutInstruments.ItemsCompleted && m.Name == "payments").Sum(m => m.Value));
    }

    [Fact]
    public async Task Metrics_AdaptiveLimit_PublishesEveryChangeOfTheLimit()
    {
        var limit = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { MaxLimit = 16 });
        await Enumerable.Range(0, 200).FanOutAsync(async (i, ct) =>
        {
            await Task.Delay(5, ct);
            return i;
        }, new FanOutOptions { Limit = limit }).WithTimeout();

        var limits = Values(FanOutInstruments.LimitCurrent);
        Assert.Contains(new AdaptiveLimitOptions().InitialLimit, limits); // the start is published too
        Assert.Contains(limit.Peak, limits);
        Assert.Equal(limit.Current, limits[^1]);
        Assert.All(_measurements.Where(m => m.Instrument == FanOutInstruments.LimitCurrent), m => Assert.Equal("adaptive", m.Kind));
    }

    [Fact]
    public void Metrics_LimitChangedWhileItsChangeIsPublished_TheGaugeEndsAtTheValueTheLimitEndedAt()
    {
        // Changes are published outside a limit's lock: here a second change lands between the first publisher's read of
        // the value (5) and its record, as when two threads change an adaptive limit at once and publish in the other order.
        var limit = new ChangingLimit(5, 6);
        limit.Change();

        var last = _measurements.Last(m => m.Instrument == FanOutInstruments.LimitCurrent && m.Kind == ChangingLimit.KindName);
        Assert.Equal(6, limit.Current);
        Assert.Equal(6, last.Value);
    }

    [Fact]
    public void Metrics_LimitWhoseValueMovesAtEveryRead_IsRecordedABoundedNumberOfTimes()
    {
        // Re-recording while the value moved must end even for a user-written limit that never holds still.
        var limit = new MovingLimit();
        limit.Change();

        var records = _measurements.Count(m => m.Instrument == FanOutInstruments.LimitCurrent && m.Kind == MovingLimit.KindName);
        Assert.InRange(records, 2, 8);
    }

    /// <summary>A user-written limit whose Current is one more at every read.</summary>
    private sealed class MovingLimit : ConcurrencyLimit
    {
        public const string KindName = "moving";
        private int _reads;

        public override int Current => Interlocked.Increment(ref _reads);

        public override string Kind => KindName;

        public void Change() => OnCurrentChanged();
    }

    /// <summary>A user-written limit whose Current reads <c>first</c> once, then <c>then</c> (another thread changed it meanwhile).</summary>
    private sealed class ChangingLimit(int first, int then) : ConcurrencyLimit
    {
        public const string KindName = "changing";
        private int _reads;

        public override int Current => Interlocked.Increment(ref _reads) == 1 ? first : then;

        public override string Kind => KindName;

        public void Change() => OnCurrentChanged();
    }

    private void Record(Instrument instrument, double value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
    {
        string? kind = null, name = null;
        foreach (var tag in tags)
        {
            if (tag.Key == FanOutInstruments.LimitKindTag)
            {
                kind = tag.Value as string;
            }
            else if (tag.Key == FanOutInstruments.LimitNameTag)
            {
                name = tag.Value as string;
            }
        }

        _measurements.Enqueue((instrument.Name, value, kind, name));
    }

    private double[] Values(string instrument) => _measurements.Where(m => m.Instrument == instrument).Select(m => m.Value).ToArray();

    private double Sum(string instrument) => Values(instrument).Sum();
}
