namespace FanOut.Redis.Tests.Infrastructure.FakeClock;

/// <summary>A test that needs a redis-server on a fake clock: skipped, with the line that installs what is missing, where it cannot start.</summary>
public sealed class FakeClockFactAttribute : FactAttribute
{
    public FakeClockFactAttribute()
    {
        if (FakeClockRedisServer.MissingReason is { } missing)
        {
            Skip = missing;
        }
    }
}
