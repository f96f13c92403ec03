using System.Collections.Concurrent;
using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Diagnostics.Tracing;

using FanOut.Diagnostics;
using FanOut.Tests.Infrastructure;
using FanOut.Tests.Limits.Simulation;

namespace FanOut.Tests.Diagnostics;

/// <summary>
/// Issue 36 item 4: every change of an adaptive limit says why, where .NET users look: the "FanOut" event source, the
/// <c>fanout.limit.changes</c> counter and an event on the current activity. Each test names its limit, so changes of
/// limits in tests running beside it are told apart.
/// </summary>
public sealed class LimitChangeReasonTests
{
    [Fact]
    public void LimitChanged_HardCap_TellsSlowStartGrowthThenTheOverloadWithItsFigures()
    {
        var name = $"cap20-{Guid.NewGuid():N}";
        using var listener = new LimitChangeListener(name);
        var simulation = new LimitSimulation(DownstreamScript.Constant(IncidentScenarios.HardCap(20)));
        var limit = ConcurrencyLimit.Adaptive(simulation.Options(new AdaptiveLimitOptions { Name = name }));

        simulation.Run(limit, items: 300);

        var changes = listener.Changes.ToArray();
        Assert.NotEmpty(changes);
        Assert.Equal((10, 11, nameof(LimitChangeReason.SlowStartGrowth)), (changes[0].From, changes[0].To, changes[0].Reason));
        Assert.All(changes, c => Assert.Equal("adaptive", c.Kind));
        Assert.All(changes, c => Assert.NotEqual(c.From, c.To));

        // The changes chain (no pause here): each starts where the one before ended, numbered 1, 2, ..., and the last ends at
        // the limit.
        Assert.Equal(Enumerable.Range(1, changes.Length).Select(i => (long)i), changes.Select(c => c.Sequence));
        for (var i = 1; i < changes.Length; i++)
        {
            Assert.Equal(changes[i - 1].To, changes[i].From);
        }

        Assert.Equal(limit.Current, changes[^1].To);

        // The cap rejected: the back-off is there, downward, decided with calls in flight and a measured baseline.
        var overload = changes.First(c => c.Reason == nameof(LimitChangeReason.Overload));
        Assert.True(overload.To < overload.From, $"{overload}");
        Assert.True(overload.InFlight > 0, $"{overload}");
        Assert.InRange(overload.BaselineMs, 18, 22); // the cap's 20 ms +-10%
        Assert.All(changes.Where(c => c.Reason == nameof(LimitChangeReason.SlowStartGrowth)), c => Assert.True(c.To > c.From, $"{c}"));
    }

    [Fact]
    public void LimitChanged_QueueAfterSlowStart_CarriesTheWindowMedianItWasDecidedOn()
    {
        // A pool of 8 that queues: latency, not a rejection, ends slow start, and the change says what the window read.
        var name = $"queue8-{Guid.NewGuid():N}";
        using var listener = new LimitChangeListener(name);
        var simulation = new LimitSimulation(DownstreamScript.Constant(new DownstreamState { Capacity = 8, Queue = 10_000 }));
        var limit = ConcurrencyLimit.Adaptive(simulation.Options(new AdaptiveLimitOptions { Name = name }));

        simulation.Run(limit, duration: TimeSpan.FromSeconds(3));

        var queue = listener.Changes.First(c => c.Reason == nameof(LimitChangeReason.QueueSeen));
        Assert.True(queue.To < queue.From, $"{queue}");
        Assert.True(queue.WindowMedianMs > 1.25 * queue.BaselineMs, $"a queue read at {queue}");
        Assert.DoesNotContain(listener.Changes, c => c.Reason == nameof(LimitChangeReason.Overload));
    }

    [Fact]
    public void LimitChanged_RetryAfter_TellsThePauseAndItsEnd()
    {
        var name = $"pause-{Guid.NewGuid():N}";
        using var listener = new LimitChangeListener(name);
        var clock = new Microsoft.Extensions.Time.Testing.FakeTimeProvider();
        var limit = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { TimeProvider = clock, InitialLimit = 4, Name = name });
        Assert.True(limit.TryAcquire());
        var start = limit.RecordStart();

        limit.RecordCompletion(start, ItemOutcome.Overloaded, TimeSpan.FromSeconds(1));
        limit.Release();
        clock.Advance(TimeSpan.FromSeconds(1));

        // The pause reads 0; the law's back-off for the overload is the level the pause ends at.
        Assert.Equal(
            [(4, 0, nameof(LimitChangeReason.RetryAfterPause)), (4, 1, nameof(LimitChangeReason.Overload)), (0, 1, nameof(LimitChangeReason.PauseEnded))],
            listener.Changes.Select(c => (c.From, c.To, c.Reason)).ToArray());
        Assert.Equal([1L, 2L, 3L], listener.Changes.Select(c => c.Sequence).ToArray());
    }

    [Fact]
    public void LimitChanged_RetryAfterWhoseTestCallIsAnswered_TellsThePauseLifted()
    {
        var name = $"lifted-{Guid.NewGuid():N}";
        using var listener = new LimitChangeListener(name);
        var clock = new Microsoft.Extensions.Time.Testing.FakeTimeProvider();
        var limit = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { TimeProvider = clock, InitialLimit = 4, Name = name });
        Assert.True(limit.TryAcquire());
        limit.RecordCompletion(limit.RecordStart(), ItemOutcome.Overloaded, TimeSpan.FromSeconds(1));
        limit.Release();

        Assert.True(limit.TryAcquire()); // the call that tests the pause, answered
        limit.RecordCompletion(limit.RecordStart(), ItemOutcome.Succeeded);
        limit.Release();

        // Lifted before its end, at the law's back-off; no PauseEnded follows when the timer fires.
        clock.Advance(TimeSpan.FromSeconds(1));
        Assert.Equal(
            [(4, 0, nameof(LimitChangeReason.RetryAfterPause)), (4, 1, nameof(LimitChangeReason.Overload)), (0, 1, nameof(LimitChangeReason.PauseLifted))],
            listener.Changes.OrderBy(c => c.Sequence).Select(c => (c.From, c.To, c.Reason)).Take(3).ToArray());
        Assert.DoesNotContain(listener.Changes, c => c.Reason == nameof(LimitChangeReason.PauseEnded));
    }

    [Fact]
    public void LimitChanges_Counter_CountsEachChangeByReasonAndName()
    {
        var name = $"meter-{Guid.NewGuid():N}";
        var counted = new ConcurrentDictionary<string, long>();
        using var meter = new MeterListener();
        meter.InstrumentPublished = (instrument, l) =>
        {
            if (instrument is { Meter.Name: FanOutInstruments.MeterName, Name: FanOutInstruments.LimitChanges })
            {
                l.EnableMeasurementEvents(instrument);
            }
        };
        meter.SetMeasurementEventCallback<long>((_, value, tags, _) =>
        {
            string? reason = null, limitName = null;
            foreach (var tag in tags)
            {
                reason = tag.Key == FanOutInstruments.LimitReasonTag ? (string?)tag.Value : reason;
                limitName = tag.Key == FanOutInstruments.LimitNameTag ? (string?)tag.Value : limitName;
            }

            if (limitName == name)
            {
                counted.AddOrUpdate(reason!, value, (_, v) => v + value);
            }
        });
        meter.Start();
        using var listener = new LimitChangeListener(name);
        var simulation = new LimitSimulation(DownstreamScript.Constant(IncidentScenarios.HardCap(20)));

        simulation.Run(ConcurrencyLimit.Adaptive(simulation.Options(new AdaptiveLimitOptions { Name = name })), items: 300);

        var told = listener.Changes.GroupBy(c => c.Reason).ToDictionary(g => g.Key, g => (long)g.Count());
        Assert.Equal(told.OrderBy(p => p.Key), counted.OrderBy(p => p.Key));
        Assert.True(counted.ContainsKey(nameof(LimitChangeReason.Overload)));
    }

    [Fact]
    public void LimitChangeEvent_OnTheCurrentActivity_CarriesReasonAndFigures()
    {
        var name = $"activity-{Guid.NewGuid():N}";
        using var source = new ActivitySource(name);
        using var activities = new ActivityListener
        {
            ShouldListenTo = s => s.Name == name,
            Sample = (ref ActivityCreationOptions<ActivityContext> _) => ActivitySamplingResult.AllDataAndRecorded,
        };
        ActivitySource.AddActivityListener(activities);
        var simulation = new LimitSimulation(DownstreamScript.Constant(IncidentScenarios.HardCap(20)));
        var limit = ConcurrencyLimit.Adaptive(simulation.Options(new AdaptiveLimitOptions { Name = name }));

        using (var activity = source.StartActivity("call"))
        {
            Assert.NotNull(activity);
            simulation.Run(limit, items: 300);

            var events = activity.Events.Where(e => e.Name == FanOutActivities.LimitChangeEvent).ToArray();
            Assert.NotEmpty(events);
            var overload = events.First(e => Tag(e, FanOutActivities.LimitReasonTag) is nameof(LimitChangeReason.Overload));
            Assert.Equal(name, Tag(overload, FanOutActivities.LimitNameTag));
            Assert.True((int)Tag(overload, FanOutActivities.LimitToTag)! < (int)Tag(overload, FanOutActivities.LimitFromTag)!);
            Assert.True((double)Tag(overload, FanOutActivities.BaselineTag)! > 0);
            Assert.Equal(limit.Current, (int)Tag(events[^1], FanOutActivities.LimitToTag)!);
        }

        static object? Tag(ActivityEvent e, string key) => e.Tags.First(t => t.Key == key).Value;
    }
}
