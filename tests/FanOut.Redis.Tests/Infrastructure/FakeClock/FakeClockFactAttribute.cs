namespace FanOut.Redis.Tests.Infrastructure.FakeClock;

/// <summary>A test that needs a redis-server on a fake clock: skipped, with the line that installs what is missing, where it cannot start.</summary>
public sealed class FakeClockFactAttribute : FactAttribute
{
    /// <summary>The variable that runs the <see cref="Long"/> ones.</summary>
    public const string LongVariable = "FANOUT_FLEET_SIMULATION_LONG";

    public FakeClockFactAttribute()
    {
        if (FakeClockRedisServer.MissingReason is { } missing)
        {
            Skip = missing;
        }
    }

    /// <summary>
    /// A run that takes too long for the default suite on a loaded machine (more than a few seconds under two busy loops):
    /// skipped unless <see cref="LongVariable"/> is set, as the soaks are.
    /// </summary>
    public bool Long
    {
        get => Skip is not null && Skip.StartsWith(LongVariable, StringComparison.Ordinal);
        set
        {
            if (value && Skip is null && Environment.GetEnvironmentVariable(LongVariable) is null)
            {
                Skip = $"{LongVariable} is not set: a fleet simulation of 9-26 simulated seconds takes 6-12 s of real time on a loaded 2-core machine";
            }
        }
    }
}
