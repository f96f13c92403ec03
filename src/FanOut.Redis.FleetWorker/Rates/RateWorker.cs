using System.Globalization;

using StackExchange.Redis;

namespace FanOut.Redis.FleetWorker.Rates;

/// <summary>
/// The worker's rate mode (<c>--rate R</c>): <see cref="RedisRateLimiter"/> at a fleet rate of R per second, taken by
/// <c>--acquirers</c> loops at once. Prints <c>ready</c>, starts on a <c>go</c> line, stops on the next line, and prints
/// <c>rate granted N failed F</c> (permits granted before the stop; acquisitions that threw).
/// </summary>
/// <remarks>An acquisition still waiting for its booked slot at the stop is canceled and not counted: its slot is after the stop.</remarks>
internal static class RateWorker
{
    public static async Task<int> RunAsync(IConnectionMultiplexer redis, WorkerArguments arguments)
    {
        using var limiter = RedisRateLimiter.Create(redis, new RedisRateLimiterOptions
        {
            Key = arguments.Key,
            PermitLimit = arguments.Rate,
            Burst = arguments.Burst,
            WhenUnavailable = arguments.Fallback > 0 ? RedisUnavailablePolicy.FallBackToLocal : RedisUnavailablePolicy.Fail,
            FallbackPermitLimit = arguments.Fallback,
        });
        await Console.Out.WriteLineAsync("ready");
        await Console.Out.FlushAsync();
        if (await Console.In.ReadLineAsync() != "go")
        {
            return 1;
        }

        using var stop = new CancellationTokenSource();
        long granted = 0, failed = 0;
        var loops = Enumerable.Range(0, Math.Max(1, arguments.Acquirers)).Select(_ => Task.Run(async () =>
        {
            while (!stop.IsCancellationRequested)
            {
                try
                {
                    using var lease = await limiter.AcquireAsync(1, stop.Token);
                    if (lease.IsAcquired && !stop.IsCancellationRequested)
                    {
                        Interlocked.Increment(ref granted);
                    }
                }
                catch (OperationCanceledException) when (stop.IsCancellationRequested)
                {
                    return;
                }
                catch (RedisLimitUnavailableException)
                {
                    Interlocked.Increment(ref failed);
                    await Task.Delay(50, CancellationToken.None);
                }
            }
        })).ToArray();

        await Console.In.ReadLineAsync();
        await stop.CancelAsync();
        await Task.WhenAll(loops);
        await Console.Out.WriteLineAsync(string.Create(CultureInfo.InvariantCulture, $"rate granted {Interlocked.Read(ref granted)} failed {Interlocked.Read(ref failed)}"));
        return 0;
    }
}
