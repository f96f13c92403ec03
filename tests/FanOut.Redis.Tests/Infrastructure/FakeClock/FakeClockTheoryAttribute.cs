namespace FanOut.Redis.Tests.Infrastructure.FakeClock;

/// <summary>A theory that needs a redis-server on a fake clock: skipped, with the line that installs what is missing, where it cannot start.</summary>
public sealed class FakeClockTheoryAttribute : TheoryAttribute
{
    public FakeClockTheoryAttribute()
    {
        if (FakeClockRedisServer.MissingReason is { } missing)
        {
            Skip = missing;
        }
    }
}
