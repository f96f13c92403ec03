using System.Collections.Concurrent;
using System.Diagnostics.Metrics;

using FanOut.Diagnostics;
using FanOut.Tests.Infrastructure;

namespace FanOut.Tests.Limits;

/// <summary><see cref="ConcurrencyLimit.Partitioned{TKey}"/>: per-key limits under a global cap no race can exceed; memory follows the keys in use.</summary>
public sealed class PartitionedLimitTests
{
    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public async Task RacingAcquiresOnManyKeys_NeverExceedTheGlobalCapOrAKeysLimit(int seed)
    {
        const int Global = 6;
        const int PerKey = 3;
        const int Keys = 10;
        var limit = ConcurrencyLimit.Partitioned<int>(Global, _ => ConcurrencyLimit.Fixed(PerKey));
        var views = Enumerable.Range(0, Keys).Select(limit.ForKey).ToArray();
        var heldPerKey = new int[Keys];
        var peakPerKey = new int[Keys];
        var held = 0;
        var peak = 0;
        var granted = 0;

        async Task Hammer(int worker)
        {
            var random = new Random(seed * 100 + worker);
            for (var i = 0; i < 300; i++)
            {
                var key = random.Next(4) == 0 ? 0 : random.Next(Keys); // one hot key, many cold ones
                var view = random.Next(3) == 0 ? limit.ForKey(key) : views[key]; // fresh views race with old ones
                using var cancel = new CancellationTokenSource();
                if (random.Next(6) == 0)
                {
                    cancel.CancelAfter(random.Next(2));
                }

                if (!view.TryAcquire() && !await view.WaitAsync(cancel.Token))
                {
                    continue;
                }

                Interlocked.Increment(ref granted);
                InterlockedMax.Raise(ref peak, Interlocked.Increment(ref held));
                InterlockedMax.Raise(ref peakPerKey[key], Interlocked.Increment(ref heldPerKey[key]));
                if (random.Next(2) == 0)
                {
                    await Task.Yield();
                }

                Interlocked.Decrement(ref heldPerKey[key]);
                Interlocked.Decrement(ref held);
                view.Release();
            }
        }

        await Task.WhenAll(Enumerable.Range(0, 16).Select(w => Task.Run(() => Hammer(w)))).WithTimeout();

        Assert.InRange(peak, 1, Global);
        Assert.All(peakPerKey, p => Assert.InRange(p, 0, PerKey));
        Assert.True(granted > 16 * 300 / 2, $"only {granted} acquires were granted");
        Assert.Equal(0, limit.InFlight);
        Assert.All(Enumerable.Range(0, Keys), k => Assert.Equal(0, limit.KeyLimit(k).InFlight));
    }

    [Fact]
    public async Task FanOutCallsPerKey_StayWithinTheirKeyAndTheGlobalCapTogether()
    {
        var limit = ConcurrencyLimit.Partitioned<string>(5, _ => ConcurrencyLimit.Fixed(2));
        var running = 0;
        var peak = 0;
        var perKey = new ConcurrentDictionary<string, int>();
        var peakPerKey = new ConcurrentDictionary<string, int>();
        var tenants = new[] { "a", "b", "c", "d" };

        await Task.WhenAll(tenants.Select(tenant => Enumerable.Range(0, 40).FanOutAsync(
            async (i, ct) =>
            {
                InterlockedMax.Raise(ref peak, Interlocked.Increment(ref running));
                var mine = perKey.AddOrUpdate(tenant, 1, (_, n) => n + 1);
                peakPerKey.AddOrUpdate(tenant, mine, (_, p) => Math.Max(p, mine));
                await Task.Delay(1, ct);
                perKey.AddOrUpdate(tenant, 0, (_, n) => n - 1);
                Interlocked.Decrement(ref running);
            },
            new FanOutOptions { Limit = limit.ForKey(tenant) }))).WithTimeout();

        Assert.InRange(peak, 2, 5);
        Assert.All(peakPerKey.Values, p => Assert.InRange(p, 1, 2));
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public async Task AdaptivePerKey_RunsAndLearnsPerKey()
    {
        var limit = ConcurrencyLimit.Partitioned<string>(64, _ => ConcurrencyLimit.Adaptive());
        var results = await Enumerable.Range(0, 200).FanOutAsync(
            async (i, ct) =>
            {
                await Task.Delay(1, ct);
                return i;
            },
            new FanOutOptions { Limit = limit.ForKey("api.example") }).WithTimeout();

        Assert.Equal(Enumerable.Range(0, 200), results);
        Assert.Equal("adaptive", limit.KeyLimit("api.example").Kind);
        Assert.True(limit.KeyLimit("api.example").Peak > new AdaptiveLimitOptions().InitialLimit, "the key's adaptive limit never grew: it learned nothing");
    }

    [Fact]
    public void IdleKeys_AreDroppedBeyondMaxIdleKeys_ButAKeyInUseIsKept()
    {
        var created = 0;
        var limit = ConcurrencyLimit.Partitioned<int>(
            100,
            _ =>
            {
                Interlocked.Increment(ref created);
                return ConcurrencyLimit.Fixed(2);
            },
            new PartitionedLimitOptions { MaxIdleKeys = 4 });

        var busy = limit.ForKey(-1);
        Assert.True(busy.TryAcquire());
        var busyLimit = limit.KeyLimit(-1);

        for (var key = 0; key < 1000; key++)
        {
            var view = limit.ForKey(key);
            Assert.True(view.TryAcquire());
            view.Release();
        }

        Assert.InRange(limit.KeyCount, 1, 6); // the busy key, up to MaxIdleKeys idle ones, and the newest
        Assert.Same(busyLimit, limit.KeyLimit(-1)); // in use: never dropped and recreated under its holder
        Assert.Equal(1, busyLimit.InFlight);
        busy.Release();
        Assert.Equal(0, limit.InFlight);
        Assert.True(created >= 1000, $"{created} key limits created for 1,001 keys");
    }

    [Fact]
    public void Metrics_NameTheFirstKeys_AndSumTheRestAsOther()
    {
        var limit = ConcurrencyLimit.Partitioned<string>(100, _ => ConcurrencyLimit.Fixed(10), new PartitionedLimitOptions { MetricKeys = 2 });
        string[] keys = ["k1", "k2", "k3", "k4", "k5"];
        foreach (var key in keys)
        {
            Assert.True(limit.ForKey(key).TryAcquire());
        }

        Assert.True(limit.ForKey("k4").TryAcquire()); // k4 holds 2

        var observed = new ConcurrentDictionary<string, int>();
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == FanOutInstruments.MeterName && instrument.Name == FanOutInstruments.PartitionInFlight)
            {
                l.EnableMeasurementEvents(instrument, limit);
            }
        };
        listener.SetMeasurementEventCallback<int>((_, value, tags, _) =>
        {
            foreach (var tag in tags)
            {
                if (tag.Key == FanOutInstruments.PartitionTag)
                {
                    observed.AddOrUpdate((string)tag.Value!, value, (_, v) => v + value);
                }
            }
        });
        listener.Start();
        listener.RecordObservableInstruments();

        // Other live partitioned limits (other tests) report too; this one's keys are k1..k5, named or summed under "other".
        Assert.Equal(1, observed["k1"]);
        Assert.Equal(1, observed["k2"]);
        Assert.False(observed.ContainsKey("k3"));
        Assert.True(observed["other"] >= 4, $"other = {observed["other"]}, expected at least k3 + 2 x k4 + k5 = 4");
    }

    [Fact]
    public void BadInput_ThrowsNamingTheValue()
    {
        Assert.Contains("0", Assert.Throws<ArgumentOutOfRangeException>(() => ConcurrencyLimit.Partitioned<int>(0, _ => ConcurrencyLimit.Fixed(1))).Message);
        var idle = Assert.Throws<ArgumentOutOfRangeException>(() => ConcurrencyLimit.Partitioned<int>(1, _ => ConcurrencyLimit.Fixed(1), new PartitionedLimitOptions { MaxIdleKeys = -1 }));
        Assert.Contains("MaxIdleKeys is -1", idle.Message);
        var metricKeys = Assert.Throws<ArgumentOutOfRangeException>(() => ConcurrencyLimit.Partitioned<int>(1, _ => ConcurrencyLimit.Fixed(1), new PartitionedLimitOptions { MetricKeys = 5000 }));
        Assert.Contains("MetricKeys is 5000", metricKeys.Message);
        var limit = ConcurrencyLimit.Partitioned<string>(1, _ => null!);
        Assert.Contains("'tenant-x'", Assert.Throws<InvalidOperationException>(() => limit.ForKey("tenant-x")).Message);
    }

}
