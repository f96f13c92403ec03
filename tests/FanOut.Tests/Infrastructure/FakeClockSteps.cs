using Microsoft.Extensions.Time.Testing;

namespace FanOut.Tests.Infrastructure;

/// <summary>
/// Moves a <see cref="FakeTimeProvider"/> the way a real timer thread sees time: in steps of at most a millisecond, so a
/// timer due within the span fires within a millisecond of its due time and reads a clock that has not run far past it
/// (one <see cref="FakeTimeProvider.Advance(TimeSpan)"/> of 10 ms fires a timer due after 1 ms with the clock already 9 ms
/// past it: a stalled machine, to a limit that reads the time).
/// </summary>
public static class FakeClockSteps
{
    private static readonly TimeSpan s_step = TimeSpan.FromMilliseconds(1);

    public static void AdvanceInSteps(this FakeTimeProvider clock, TimeSpan span)
    {
        for (var left = span; left > TimeSpan.Zero; left -= s_step)
        {
            clock.Advance(left < s_step ? left : s_step);
        }
    }
}
