namespace FanOut.Redis.Tests.Infrastructure;

/// <summary>Hang guards. A timeout here is a failure (the condition never held), never a measurement.</summary>
public static class Eventually
{
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(20);

    public static async Task TrueAsync(Func<Task<bool>> condition, string what, TimeSpan? timeout = null)
    {
        var deadline = DateTime.UtcNow + (timeout ?? Timeout);
        while (!await Holds(condition))
        {
            if (DateTime.UtcNow > deadline)
            {
                Assert.Fail($"Timed out waiting until {what}.");
            }

            await Task.Delay(10);
        }
    }

    /// <summary>The condition, false while the connection to a restarting Redis is not back yet.</summary>
    private static async Task<bool> Holds(Func<Task<bool>> condition)
    {
        try
        {
            return await condition();
        }
        catch (StackExchange.Redis.RedisConnectionException)
        {
            return false;
        }
    }
}
