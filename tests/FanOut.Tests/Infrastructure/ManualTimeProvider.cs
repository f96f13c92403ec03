namespace FanOut.Tests.Infrastructure;

/// <summary>
/// A clock that moves only when told (Microsoft.Extensions.TimeProvider.Testing is not available here). Timestamps are
/// in ticks of 100 ns; timers are not supported, since the adaptive limit only reads the clock.
/// </summary>
public sealed class ManualTimeProvider : TimeProvider
{
    private long _ticks = TimeSpan.TicksPerDay;

    public override long TimestampFrequency => TimeSpan.TicksPerSecond;

    public TimeSpan Now => TimeSpan.FromTicks(Volatile.Read(ref _ticks));

    public override long GetTimestamp() => Volatile.Read(ref _ticks);

    public void Advance(TimeSpan by) => Interlocked.Add(ref _ticks, by.Ticks);

    public void SetTo(TimeSpan now)
    {
        Assert.True(now.Ticks >= _ticks, "Time never goes back.");
        Volatile.Write(ref _ticks, now.Ticks);
    }
}
