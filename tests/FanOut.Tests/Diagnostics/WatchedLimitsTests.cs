using System.Collections.Concurrent;
using System.Diagnostics.Tracing;

using FanOut.Diagnostics;

namespace FanOut.Tests.Diagnostics;

/// <summary>
/// Issue 39 item 1: while a session asks for the <c>LimitStates</c> keyword (as <c>fanout watch</c> does over EventPipe),
/// every limit in use publishes its state once per interval, and one left idle is dropped, then taken back when used again.
/// Each test names its limit, so limits of tests running beside it are told apart; every wait is for an event.
/// </summary>
public sealed class WatchedLimitsTests
{
    private static readonly TimeSpan EventWait = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task LimitState_AdaptiveLimitInUse_PublishesItsLimitInFlightAndTheIdOfItsChanges()
    {
        var name = $"watched-{Guid.NewGuid():N}";
        using var listener = new StateListener(name);
        var limit = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { Name = name, InitialLimit = 4 });
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);

        var run = Enumerable.Range(0, 400).FanOutAsync(
            async (i, ct) =>
            {
                if (i < 4)
                {
                    await gate.Task;
                }

                await Task.Yield();
            },
            new FanOutOptions { Limit = limit });

        // Four items held at the gate: a state shows them in flight under the limit.
        var held = await listener.WaitForState(s => s.InFlight == 4);
        Assert.Equal("adaptive", held.Kind);
        Assert.Equal(4, held.Limit);
        Assert.True(held.LimitId > 0, $"{held}");

        gate.SetResult();
        await run;

        // The answers were timed: a later state reports their latency, and every change of this limit names the same id.
        var answered = await listener.WaitForState(s => s.LatencyMs >= 0);
        Assert.Equal(held.LimitId, answered.LimitId);
        Assert.All(listener.ChangeIds, id => Assert.Equal(held.LimitId, id));
    }

    [Fact]
    public async Task LimitChanged_FirstChangeAfterASessionStarts_CarriesTheIdOfTheLimitsStates()
    {
        // Used while nobody watched, then changed (a Retry-After pause) before it is used again: the change must not say "limit 0".
        var name = $"unseen-{Guid.NewGuid():N}";
        var limit = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { Name = name, InitialLimit = 4 });
        Assert.True(limit.TryAcquire());
        limit.Release();

        using var listener = new StateListener(name);
        await listener.WaitForIntervals(1);
        limit.RecordCompletion(System.Diagnostics.Stopwatch.GetTimestamp(), ItemOutcome.Overloaded, TimeSpan.FromMilliseconds(100));

        var change = await listener.WaitForChangeId();
        var state = await listener.WaitForState(_ => true);
        Assert.True(change > 0, $"change published with limit id {change}");
        Assert.Equal(state.LimitId, change);
    }

    [Fact]
    public async Task LimitState_LimitLeftIdle_IsDroppedAfterItsIdleIntervalsAndTakenBackWhenUsedAgain()
    {
        var name = $"idle-{Guid.NewGuid():N}";
        using var listener = new StateListener(name);
        var limit = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { Name = name });

        await Enumerable.Range(0, 20).FanOutAsync(async (i, ct) => await Task.Yield(), new FanOutOptions { Limit = limit });
        var first = await listener.WaitForState(_ => true);

        // Idle from now on: published for a few intervals, then an interval closes without it.
        await listener.WaitForIntervalWithout();
        var idleStates = listener.States.Count(s => s.LimitId == first.LimitId);
        Assert.InRange(idleStates, 1, FanOutEvents.IdleIntervalsBeforeDropped + 2);

        // Used again: watched again, under the same id.
        listener.Clear();
        await Enumerable.Range(0, 20).FanOutAsync(async (i, ct) => await Task.Yield(), new FanOutOptions { Limit = limit });
        var again = await listener.WaitForState(_ => true);
        Assert.Equal(first.LimitId, again.LimitId);
    }

    [Fact]
    public async Task LimitState_FixedLimitWithAWaiter_ShowsTheWaiter()
    {
        // A fixed limit has no name: it is told apart here by its id, read from the state that shows it full.
        using var listener = new StateListener(name: "fixed");
        var limit = ConcurrencyLimit.Fixed(1);
        Assert.True(limit.TryAcquire());
        using var cancel = new CancellationTokenSource();
        var wait = limit.WaitAsync(cancel.Token);

        var state = await listener.WaitForState(s => s.Kind == "fixed" && s.Limit == 1 && s.InFlight == 1 && s.Waiting == 1);
        Assert.Equal(-1, state.LatencyMs);

        limit.Release();
        Assert.True(await wait);
        limit.Release();
    }

    /// <summary>One LimitState event.</summary>
    private sealed record State(long LimitId, string Kind, string Name, int Limit, int InFlight, int Waiting, double LatencyMs, double BaselineMs, long Overloads, long Pauses, long Changes);

    /// <summary>Asks for limit states every 0.1 s and for limit changes and collects those of the limits named <c>name</c>, interval by interval.</summary>
    private sealed class StateListener(string name) : EventListener
    {
        private readonly ConcurrentQueue<State> _states = new();
        private readonly ConcurrentQueue<long> _changeIds = new();
        private readonly SemaphoreSlim _intervals = new(0);
        private int _seenInInterval;
        private int _intervalsWithout;

        public IReadOnlyCollection<State> States => _states;

        public IReadOnlyCollection<long> ChangeIds => _changeIds;

        public void Clear() => _states.Clear();

        /// <summary>Waits, interval by interval, for a state of this name that <paramref name="match"/> accepts.</summary>
        public async Task<State> WaitForState(Func<State, bool> match)
        {
            using var timeout = new CancellationTokenSource(EventWait);
            while (true)
            {
                if (_states.FirstOrDefault(match) is { } found)
                {
                    return found;
                }

                await _intervals.WaitAsync(timeout.Token);
            }
        }

        /// <summary>Waits until <paramref name="count"/> intervals have closed (the session is live).</summary>
        public async Task WaitForIntervals(int count)
        {
            using var timeout = new CancellationTokenSource(EventWait);
            for (var i = 0; i < count; i++)
            {
                await _intervals.WaitAsync(timeout.Token);
            }
        }

        /// <summary>Waits, interval by interval, for the first change of this name and returns the limit id it carried.</summary>
        public async Task<long> WaitForChangeId()
        {
            using var timeout = new CancellationTokenSource(EventWait);
            while (true)
            {
                if (_changeIds.TryPeek(out var id))
                {
                    return id;
                }

                await _intervals.WaitAsync(timeout.Token);
            }
        }

        /// <summary>Waits for an interval that closed with no state of this name.</summary>
        public async Task WaitForIntervalWithout()
        {
            using var timeout = new CancellationTokenSource(EventWait);
            var before = Volatile.Read(ref _intervalsWithout);
            while (Volatile.Read(ref _intervalsWithout) == before)
            {
                await _intervals.WaitAsync(timeout.Token);
            }
        }

        protected override void OnEventSourceCreated(EventSource eventSource)
        {
            if (eventSource.Name == FanOutEvents.SourceName)
            {
                // Both keywords, as fanout watch asks for them: states, and the changes that must carry the same ids.
                EnableEvents(eventSource, EventLevel.Informational, (EventKeywords)(FanOutEvents.LimitStatesKeyword | FanOutEvents.LimitChangesKeyword),
                    new Dictionary<string, string?> { [FanOutEvents.StateIntervalArgument] = "0.1" });
            }
        }

        protected override void OnEventWritten(EventWrittenEventArgs e)
        {
            if (e.Payload is not { } p)
            {
                return;
            }

            switch (e.EventId)
            {
                case FanOutEvents.LimitStateId when (string)p[2]! == name:
                    Assert.Equal(FanOutEvents.LimitState, e.EventName);
                    _states.Enqueue(new((long)p[0]!, (string)p[1]!, (string)p[2]!, (int)p[3]!, (int)p[4]!, (int)p[5]!, (double)p[6]!, (double)p[7]!, (long)p[8]!, (long)p[9]!, (long)p[10]!));
                    Interlocked.Exchange(ref _seenInInterval, 1);
                    break;
                case FanOutEvents.LimitsWatchedId:
                    if (Interlocked.Exchange(ref _seenInInterval, 0) == 0 && !_states.IsEmpty)
                    {
                        Interlocked.Increment(ref _intervalsWithout);
                    }

                    _intervals.Release();
                    break;
                case FanOutEvents.LimitChangedId when (string)p[1]! == name:
                    _changeIds.Enqueue((long)p[9]!);
                    break;
            }
        }
    }
}
