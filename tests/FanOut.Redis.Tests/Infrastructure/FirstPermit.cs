namespace FanOut.Redis.Tests.Infrastructure;

/// <summary>
/// The first permit of a limit on a connection with a short command timeout (300 ms, so that a paused Redis times commands
/// out), taken again if that first round trip misses the timeout: on a loaded CI host it took 824 and 936 ms while other
/// test assemblies ran (a new connection's first script, a thread pool still growing). The first permit is never what a
/// test measures; a round trip that misses its timeout later, under the test's own fault, still fails the test.
/// </summary>
public static class FirstPermit
{
    private const int Attempts = 5;

    /// <summary>Takes a permit of <paramref name="limit"/>, trying up to five round trips that end unanswered (<see cref="RedisLimitUnavailableException"/>).</summary>
    public static async Task TakeAsync(RedisConcurrencyLimit limit)
    {
        for (var attempt = 1; ; attempt++)
        {
            try
            {
                Assert.True(await limit.WaitAsync(CancellationToken.None).WaitAsync(Eventually.Timeout));
                return;
            }
            catch (RedisLimitUnavailableException) when (attempt < Attempts)
            {
                // The next round trip finds the connection warm. Tries are spaced (0.2 s, 0.4 s, ...; 2 s in all) so that they
                // span a reconnect: in one CI run all five failed within about a second.
                await Task.Delay(TimeSpan.FromMilliseconds(200 * attempt));
            }
        }
    }
}
