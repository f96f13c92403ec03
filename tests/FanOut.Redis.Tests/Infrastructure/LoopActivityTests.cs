using FanOut.Redis.Infrastructure;

using Microsoft.Extensions.Time.Testing;

namespace FanOut.Redis.Tests.Infrastructure;

/// <summary>
/// The count <see cref="RedisConcurrencyLimit.WhenSettledAsync"/> waits on: a loop woken by a fake clock or a signal counts
/// busy from the moment it is woken, before its continuation runs, so a driver never reads "settled" in between.
/// </summary>
public sealed class LoopActivityTests
{
    private static readonly TimeSpan s_guard = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task DelayAsync_TheClockPassesItsEnd_CountsTheLoopBusyWithinTheAdvance()
    {
        var time = new FakeTimeProvider();
        var activity = new LoopActivity();
        activity.Enter(); // the loop runs
        var delay = activity.DelayAsync(TimeSpan.FromSeconds(1), time, CancellationToken.None);
        Assert.Equal(0, activity.Busy);
        Assert.True(activity.WhenIdleAsync().IsCompleted);

        time.Advance(TimeSpan.FromMilliseconds(999));
        Assert.Equal(0, activity.Busy);
        var wakeups = activity.Wakeups;
        time.Advance(TimeSpan.FromMilliseconds(1));

        // Task.Delay's continuation would still be queued here: the loop must already count.
        Assert.Equal(1, activity.Busy);
        Assert.Equal(wakeups + 1, activity.Wakeups);
        Assert.False(activity.WhenIdleAsync().IsCompleted);
        await delay.WaitAsync(s_guard);
        activity.Exit();
        Assert.True(activity.WhenIdleAsync().IsCompleted);
    }

    [Fact]
    public async Task WakeSignal_SetWhileALoopWaits_CountsItBusyBeforeItRuns()
    {
        var time = new FakeTimeProvider();
        var activity = new LoopActivity();
        var signal = new WakeSignal(activity);
        activity.Enter();
        var wait = signal.WaitAsync(TimeSpan.FromSeconds(1), time, CancellationToken.None);
        var idle = activity.WhenIdleAsync();
        Assert.True(idle.IsCompleted);

        signal.Set();
        Assert.Equal(1, activity.Busy);
        var busy = activity.WhenIdleAsync();
        await wait.WaitAsync(s_guard);

        // The timer was disposed with the wait: moving the clock past it wakes nothing.
        activity.Exit();
        await busy.WaitAsync(s_guard);
        var wakeups = activity.Wakeups;
        time.Advance(TimeSpan.FromSeconds(2));
        Assert.Equal(wakeups, activity.Wakeups);
    }

    [Fact]
    public async Task WakeSignal_SetWhileTheLoopIsBusy_IsTakenByItsNextWaitWithoutCountingTwice()
    {
        var time = new FakeTimeProvider();
        var activity = new LoopActivity();
        var signal = new WakeSignal(activity);
        activity.Enter();
        signal.Set(); // the loop is busy: nothing more to count
        Assert.Equal(1, activity.Busy);

        await signal.WaitAsync(null, time, CancellationToken.None).WaitAsync(s_guard); // consumed at once
        Assert.Equal(1, activity.Busy);

        var next = signal.WaitAsync(null, time, CancellationToken.None); // nothing set: the loop waits
        Assert.Equal(0, activity.Busy);
        Assert.False(next.IsCompleted);
        signal.Set();
        await next.WaitAsync(s_guard);
        activity.Exit();
        Assert.Equal(0, activity.Busy);
    }
}
