using FanOut.Redis.Infrastructure;

using Microsoft.Extensions.Time.Testing;

using StackExchange.Redis;

namespace FanOut.Redis.Tests.Infrastructure;

/// <summary>The one place a loop's failures are handled: no exception a Redis client throws ends a loop, and only the stop does.</summary>
public sealed class BackgroundLoopTests
{
    private static readonly TimeSpan s_guard = TimeSpan.FromSeconds(20);

    [Fact]
    public async Task RunAsync_StepThrowsWhatRedisClientsThrow_GoesOnAfterEachBackoff()
    {
        var time = new FakeTimeProvider();
        var backoff = TimeSpan.FromSeconds(1);
        var failures = MakeFailures();
        var steps = 0;
        var seen = new List<Exception>();
        using var stop = new CancellationTokenSource();
        var stepped = new SemaphoreSlim(0);

        Task Step(CancellationToken token)
        {
            var n = Interlocked.Increment(ref steps);
            stepped.Release();
            return n <= failures.Length ? Task.FromException(failures[n - 1]) : Task.Delay(Timeout.Infinite, token);
        }

        var loop = BackgroundLoop.RunAsync(Step, seen.Add, () => backoff, time, new LoopActivity(), stop.Token);
        Assert.True(await stepped.WaitAsync(s_guard));
        for (var i = 1; i <= failures.Length; i++)
        {
            Assert.Equal(i, Volatile.Read(ref steps));

            // The next step waits for the backoff on the loop's clock, not the machine's...
            await Task.Delay(20);
            Assert.Equal(i, Volatile.Read(ref steps));

            // ...and comes once the clock moves (moved until it does: the loop may not have started its delay yet).
            await NextStepAsync(stepped, time, backoff);
        }

        await stop.CancelAsync();
        await loop.WaitAsync(s_guard); // ends on the stop, without faulting

        Assert.Equal(failures, seen);
    }

    [Fact]
    public async Task RunAsync_StoppedDuringBackoff_EndsWithoutFaulting()
    {
        var time = new FakeTimeProvider();
        using var stop = new CancellationTokenSource();
        var failed = new TaskCompletionSource();
        var loop = BackgroundLoop.RunAsync(_ => Task.FromException(new RedisConnectionException(ConnectionFailureType.SocketClosed, CommandFlags.None, "closed", null, CommandStatus.Sent)), _ => failed.TrySetResult(), () => TimeSpan.FromHours(1), time, new LoopActivity(), stop.Token);
        await failed.Task.WaitAsync(s_guard);

        await stop.CancelAsync();

        await loop.WaitAsync(s_guard);
        Assert.True(loop.IsCompletedSuccessfully);
    }

    private static async Task NextStepAsync(SemaphoreSlim stepped, FakeTimeProvider time, TimeSpan backoff)
    {
        var deadline = DateTime.UtcNow + s_guard;
        while (!await stepped.WaitAsync(10))
        {
            Assert.True(DateTime.UtcNow < deadline, "The loop did not go on after its backoff.");
            time.Advance(backoff);
        }
    }

    /// <summary>What StackExchange.Redis and the limit's own bound throw: none derives from one common Redis type.</summary>
    private static Exception[] MakeFailures() =>
    [
        new RedisTimeoutException(CommandFlags.None, "Timeout awaiting response", CommandStatus.Sent),
        new TimeoutException("no answer within the limit's bound"),
        new RedisConnectionException(ConnectionFailureType.UnableToConnect, CommandFlags.None, "refused", null, CommandStatus.WaitingToBeSent),
        new RedisServerException(RedisErrorKind.OutOfMemory, CommandFlags.None, "OOM command not allowed when used memory > 'maxmemory'."),
        new ObjectDisposedException("ConnectionMultiplexer"),
        new OperationCanceledException("canceled by something other than the stop"),
        new InvalidCastException("a malformed answer"),
    ];
}
