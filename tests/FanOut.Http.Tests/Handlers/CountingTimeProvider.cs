using Microsoft.Extensions.Time.Testing;

namespace FanOut.Http.Tests.Handlers;

/// <summary>
/// A fake clock that counts the timers created on it, so a test advances it only once the code under test waits on it (a
/// handler's back-off; a queued request's timeout, armed outside the admission's lock a moment after it counts as queued).
/// Linked into FanOut.AspNetCore.Tests.
/// </summary>
internal sealed class CountingTimeProvider : FakeTimeProvider
{
    private int _timers;

    public int TimersCreated => Volatile.Read(ref _timers);

    public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
    {
        // Counted once created: a test that advances the clock on seeing the count must not advance it before the timer's
        // due time is set (beside two busy loops, a queue timeout was set after the advance and never fired).
        var timer = base.CreateTimer(callback, state, dueTime, period);
        Interlocked.Increment(ref _timers);
        return timer;
    }

    /// <summary>Waits (really, briefly) until at least <paramref name="count"/> timers exist; fails rather than hangs.</summary>
    public async Task WaitForTimersAsync(int count)
    {
        for (var i = 0; i < 30_000 && TimersCreated < count; i++)
        {
            await Task.Delay(1);
        }

        Assert.True(TimersCreated >= count, $"{TimersCreated} timers, expected {count}");
    }
}
