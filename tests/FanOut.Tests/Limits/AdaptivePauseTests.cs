using System.Collections.Concurrent;

using FanOut.Execution;
using FanOut.Tests.Infrastructure;

using Microsoft.Extensions.Time.Testing;

namespace FanOut.Tests.Limits;

/// <summary>
/// The adaptive limit's Retry-After pause (docs/adaptive.md, "A Retry-After pauses the limit"): no permit until the pause has
/// passed, waiters woken at its end by its one-shot timer, one back-off per storm, up to
/// <see cref="OverloadBackoff.MaxHonouredRetryAfter"/>. Time is a <see cref="FakeTimeProvider"/>'s.
/// </summary>
public sealed class AdaptivePauseTests
{
    private static readonly TimeSpan s_second = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan s_tick = TimeSpan.FromMilliseconds(1);

    private static AdaptiveConcurrencyLimit Adaptive(FakeTimeProvider clock, int initial = 4) =>
        (AdaptiveConcurrencyLimit)ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { TimeProvider = clock, InitialLimit = initial });

    /// <summary>Takes a permit and records the attempt's start.</summary>
    private static long Start(ConcurrencyLimit limit)
    {
        Assert.True(limit.TryAcquire());
        return limit.RecordStart();
    }

    /// <summary>Ends an attempt as a fan-out does: its outcome (with the hint) first, then the permit back.</summary>
    private static void End(ConcurrencyLimit limit, long start, ItemOutcome outcome, TimeSpan? retryAfter = null)
    {
        limit.RecordCompletion(start, outcome, retryAfter);
        limit.Release();
    }

    [Fact]
    public void RecordCompletion_OverloadWithRetryAfter_GrantsNoPermitUntilThePauseHasPassed()
    {
        var clock = new FakeTimeProvider();
        var limit = Adaptive(clock);
        var start = Start(limit);

        End(limit, start, ItemOutcome.Overloaded, s_second);

        Assert.True(limit.IsPaused);
        Assert.Equal(0, limit.Current);
        Assert.False(limit.TryAcquire());
        clock.Advance(s_second - s_tick);
        Assert.False(limit.TryAcquire());
        clock.Advance(s_tick);
        Assert.False(limit.IsPaused);
        Assert.True(limit.Current >= 1);
        Assert.True(limit.TryAcquire());
        limit.Release();
    }

    [Fact]
    public void RecordCompletion_OverloadWithoutRetryAfter_DoesNotPause()
    {
        var clock = new FakeTimeProvider();
        var limit = Adaptive(clock);

        End(limit, Start(limit), ItemOutcome.Overloaded);

        Assert.False(limit.IsPaused);
        Assert.True(limit.TryAcquire());
        limit.Release();
    }

    [Fact]
    public async Task WaitAsync_DuringAPause_IsGrantedByTheTimerAtItsEnd()
    {
        var clock = new FakeTimeProvider();
        var limit = Adaptive(clock);
        End(limit, Start(limit), ItemOutcome.Overloaded, s_second);

        var wait = limit.WaitAsync();
        clock.Advance(s_second - s_tick);
        Assert.False(wait.IsCompleted);
        Assert.Equal(0, limit.InFlight);

        clock.Advance(s_tick);
        Assert.Equal(1, limit.InFlight); // granted inside Advance, by the pause's timer (checked first: a missing wake-up fails, not hangs)
        Assert.True(await wait);
        limit.Release();
    }

    [Fact]
    public async Task WaitAsync_CanceledDuringAPause_ReturnsFalseAndLeavesNoWaiter()
    {
        var clock = new FakeTimeProvider();
        var limit = Adaptive(clock);
        End(limit, Start(limit), ItemOutcome.Overloaded, s_second);
        using var cts = new CancellationTokenSource();

        var wait = limit.WaitAsync(cts.Token);
        await cts.CancelAsync();

        Assert.False(await wait);
        Assert.Equal(0, limit.Waiting);
        clock.Advance(s_second);
        Assert.Equal(0, limit.InFlight); // the timer's wake-up granted nobody's permit to the canceled waiter
        Assert.Equal(0, limit.StaleCancellations);
        Assert.True(limit.TryAcquire());
        limit.Release();
    }

    [Fact]
    public void RecordCompletion_RetryAfterAtTheCap_PausesForItAndBeyondItDoesNotPause()
    {
        // The run waits out a hint up to MaxHonouredRetryAfter and fails the item on a longer one (nobody sits idle for it):
        // the limit honours what the run honours.
        var clock = new FakeTimeProvider();
        var limit = Adaptive(clock);

        End(limit, Start(limit), ItemOutcome.Overloaded, OverloadBackoff.MaxHonouredRetryAfter);
        clock.Advance(OverloadBackoff.MaxHonouredRetryAfter - s_tick);
        Assert.True(limit.IsPaused);
        clock.Advance(s_tick);
        Assert.False(limit.IsPaused);

        End(limit, Start(limit), ItemOutcome.Overloaded, OverloadBackoff.MaxHonouredRetryAfter + s_tick);
        Assert.False(limit.IsPaused);
        End(limit, Start(limit), ItemOutcome.Overloaded, TimeSpan.MaxValue);
        Assert.False(limit.IsPaused);
        Assert.True(limit.TryAcquire());
        limit.Release();
    }

    [Fact]
    public void RecordCompletion_OverloadsOfOneStorm_BackOffOnceAndExtendThePause()
    {
        // Twenty attempts in flight when the downstream starts pausing its clients: all are answered 429 with a Retry-After.
        var clock = new FakeTimeProvider();
        var limit = Adaptive(clock, initial: 20);
        var starts = Enumerable.Range(0, 20).Select(_ => Start(limit)).ToArray();

        // The same limit told of the first overload only, without a hint: the one back-off the storm may cost.
        var twin = Adaptive(clock, initial: 20);
        var twinStarts = Enumerable.Range(0, 20).Select(_ => Start(twin)).ToArray();
        End(twin, twinStarts[0], ItemOutcome.Overloaded);

        End(limit, starts[0], ItemOutcome.Overloaded, s_second);
        clock.Advance(TimeSpan.FromMilliseconds(500));
        foreach (var start in starts.Skip(1))
        {
            End(limit, start, ItemOutcome.Overloaded, s_second); // the last of them asks until 1.5 s
        }

        clock.Advance(TimeSpan.FromMilliseconds(500));
        Assert.True(limit.IsPaused); // extended past the first hint's end: the timer waited for the rest
        clock.Advance(TimeSpan.FromMilliseconds(500));
        Assert.False(limit.IsPaused);
        Assert.Equal(twin.Current, limit.Current);
        Assert.True(limit.Current >= 15, $"limit {limit.Current} after the pause, from 20");
    }

    [Fact]
    public async Task FanOutAsync_OverloadedExceptionWithRetryAfter_StartsNoNewItemUntilThePauseHasPassed()
    {
        // The run's completion path passes the hint: item 0 is answered "busy, retry after 5 s", and the items in flight
        // finish during the pause; no new item starts until it has passed, then every item completes.
        var clock = new FakeTimeProvider();
        var limit = Adaptive(clock);
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var attempts = new ConcurrentQueue<int>();
        var task = Enumerable.Range(0, 10).ToArray().FanOutAsync(async (i, _) =>
        {
            attempts.Enqueue(i);
            if (i == 0 && attempts.Count(a => a == 0) == 1)
            {
                throw new OverloadedException("busy", TimeSpan.FromSeconds(5));
            }

            await gate.Task;
            return i;
        }, new FanOutOptions { Limit = limit });

        await Wait.UntilAsync(() => limit.IsPaused, "item 0's overload paused the limit");
        // Every item that took its permit before the pause has entered its body (item 0 gave its permit back): a permit taken
        // before the pause whose body had not run yet counted as a start during it (seen once on a loaded machine).
        await Wait.UntilAsync(() => attempts.Count == 1 + limit.InFlight, "the permits taken before the pause reached their bodies");
        var startedBeforeThePause = attempts.Count;
        gate.SetResult();
        await Wait.UntilAsync(() => limit.InFlight == 0, "the items in flight finished and gave their permits back");
        await Task.Delay(50); // a start during the pause would have a chance to show (not a bound: the count is checked)
        Assert.Equal(startedBeforeThePause, attempts.Count);
        Assert.False(task.IsCompleted);

        clock.Advance(TimeSpan.FromSeconds(5));
        var results = await task.WithTimeout();
        Assert.Equal(Enumerable.Range(0, 10), results);
        Assert.Equal(2, attempts.Count(a => a == 0));
    }

    [Fact]
    public void RecordCompletion_FixedLimitWithRetryAfter_KeepsGrantingPermits()
    {
        // The caller chose the concurrency: a fixed limit is exactly that, and the run's items wait out the hint without a permit.
        var limit = ConcurrencyLimit.Fixed(2);

        End(limit, Start(limit), ItemOutcome.Overloaded, s_second);

        Assert.Equal(2, limit.Current);
        Assert.True(limit.TryAcquire());
        limit.Release();
    }
}
