using System.Collections.Concurrent;
using System.Diagnostics.Metrics;

using FanOut.Diagnostics;
using FanOut.Tests.Infrastructure;

using Microsoft.Extensions.Options;
using Microsoft.Extensions.Primitives;

namespace FanOut.Tests.Limits;

/// <summary><see cref="ConcurrencyLimit.Settable"/> changed while a call runs on it: grow starts at once, shrink drains.</summary>
public sealed class SettableLimitTests
{
    [Fact]
    public async Task Set_Higher_StartsWaitingWorkAtOnce()
    {
        var limit = ConcurrencyLimit.Settable(2);
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var started = 0;
        var run = Enumerable.Range(0, 40).FanOutAsync(
            async (i, ct) =>
            {
                Interlocked.Increment(ref started);
                await gate.Task;
            },
            new FanOutOptions { Limit = limit });

        await Wait.UntilAsync(() => Volatile.Read(ref started) == 2, "2 items started under a limit of 2");
        limit.Set(6);
        await Wait.UntilAsync(() => Volatile.Read(ref started) == 6, "6 items started once the limit rose to 6, with none finishing");
        Assert.Equal(6, limit.InFlight);

        gate.SetResult();
        await run.WithTimeout();
        Assert.Equal(40, started);
        Assert.Equal(6, limit.Peak);
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public async Task Set_Lower_LetsRunningItemsFinish_AndStartsNoMoreUntilBelow()
    {
        var limit = ConcurrencyLimit.Settable(5);
        var gates = Enumerable.Range(0, 30).Select(_ => new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).ToArray();
        var started = 0;
        var running = 0;
        var peakAfterDrain = 0;
        var drained = false;
        var run = Enumerable.Range(0, 30).FanOutAsync(
            async (i, ct) =>
            {
                Interlocked.Increment(ref started);
                var now = Interlocked.Increment(ref running);
                if (Volatile.Read(ref drained))
                {
                    InterlockedMax.Raise(ref peakAfterDrain, now);
                }

                await gates[i].Task;
                if (i >= 5)
                {
                    await Task.Yield();
                }

                Interlocked.Decrement(ref running);
            },
            new FanOutOptions { Limit = limit });

        await Wait.UntilAsync(() => Volatile.Read(ref started) == 5, "5 items started under a limit of 5");
        limit.Set(1);
        for (var i = 0; i < 4; i++)
        {
            gates[i].SetResult();
        }

        await Wait.UntilAsync(() => Volatile.Read(ref running) == 1, "4 of the 5 running items finished");
        await Task.Delay(50);
        Assert.Equal(5, Volatile.Read(ref started)); // one still runs: at the new limit of 1, nothing more starts

        Volatile.Write(ref drained, true);
        for (var i = 5; i < gates.Length; i++)
        {
            gates[i].SetResult();
        }

        gates[4].SetResult();
        await run.WithTimeout();
        Assert.Equal(30, started);
        Assert.InRange(peakAfterDrain, 1, 1);
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public void Set_RecordsTheNewLimitOnTheGauge()
    {
        var seen = new ConcurrentQueue<int>();
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == FanOutInstruments.MeterName && instrument.Name == FanOutInstruments.LimitCurrent)
            {
                l.EnableMeasurementEvents(instrument);
            }
        };
        listener.SetMeasurementEventCallback<int>((_, value, tags, _) =>
        {
            foreach (var tag in tags)
            {
                if (tag.Key == FanOutInstruments.LimitKindTag && (string?)tag.Value == "settable")
                {
                    seen.Enqueue(value);
                }
            }
        });
        listener.Start();

        var limit = ConcurrencyLimit.Settable(3);
        limit.Set(11);
        limit.Set(11); // unchanged: nothing recorded
        limit.Set(4);

        Assert.Equal([11, 4], seen.Where(v => v is 11 or 4).ToArray());
    }

    [Theory]
    [InlineData(0)]
    [InlineData(-3)]
    public void Settable_BadValue_ThrowsNamingIt(int bad)
    {
        var error = Assert.Throws<ArgumentOutOfRangeException>(() => ConcurrencyLimit.Settable(bad));
        Assert.Contains(bad.ToString(System.Globalization.CultureInfo.InvariantCulture), error.Message);
        var limit = ConcurrencyLimit.Settable(2);
        Assert.Throws<ArgumentOutOfRangeException>(() => limit.Set(bad));
        Assert.Equal(2, limit.Current); // the bad value lost nothing
    }

    [Fact]
    public void Set_FromIOptionsMonitorOnChange_FollowsConfiguration()
    {
        var configured = 4;
        var reload = new ReloadToken();
        var monitor = new OptionsMonitor<LimitSettings>(
            new OptionsFactory<LimitSettings>([new ConfigureOptions<LimitSettings>(o => o.MaxConcurrency = configured)], []),
            [reload],
            new OptionsCache<LimitSettings>());

        var limit = ConcurrencyLimit.Settable(monitor.CurrentValue.MaxConcurrency);
        using var subscription = monitor.OnChange(o => limit.Set(o.MaxConcurrency));
        Assert.Equal(4, limit.Current);

        configured = 9;
        reload.Reload();

        Assert.Equal(9, limit.Current);
    }


    public sealed class LimitSettings
    {
        public int MaxConcurrency { get; set; }
    }

    /// <summary>A configuration reload, as a file or a configuration service would signal it.</summary>
    private sealed class ReloadToken : IOptionsChangeTokenSource<LimitSettings>
    {
        private CancellationTokenSource _changed = new();

        public string? Name => Options.DefaultName;

        public IChangeToken GetChangeToken() => new CancellationChangeToken(_changed.Token);

        public void Reload() => Interlocked.Exchange(ref _changed, new CancellationTokenSource()).Cancel();
    }
}
