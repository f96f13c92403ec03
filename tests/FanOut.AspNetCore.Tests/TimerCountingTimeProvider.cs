using Microsoft.Extensions.Time.Testing;

namespace FanOut.AspNetCore.Tests;

/// <summary>
/// A <see cref="FakeTimeProvider"/> that counts the timers made on it, so a test can wait for the event "the queued request's
/// timeout is armed" before it moves the clock: a request counts as queued (under the admission's lock) a moment before
/// its timer exists (armed outside the lock: the provider is the user's), and a clock moved in between left the timer
/// due 2 s after the jump, so the test waited for a timeout that never came (seen once at load 12).
/// </summary>
internal sealed class TimerCountingTimeProvider : FakeTimeProvider
{
    private int _timersCreated;

    public int TimersCreated => Volatile.Read(ref _timersCreated);

    public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
    {
        Interlocked.Increment(ref _timersCreated);
        return base.CreateTimer(callback, state, dueTime, period);
    }
}
