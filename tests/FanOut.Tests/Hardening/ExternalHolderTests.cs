using FanOut.Tests.Infrastructure;

namespace FanOut.Tests.Hardening;

/// <summary>
/// Permits held outside any fan-out call (code calling <see cref="ConcurrencyLimit.TryAcquire"/> itself, a RateLimiter lease,
/// an HTTP handler): a call on the same limit waits for them, and never ends with items never run.
/// </summary>
public sealed class ExternalHolderTests
{
    [Fact]
    public async Task FanOutAsync_EveryPermitHeldOutside_WaitsAndRunsEveryItem()
    {
        var limit = ConcurrencyLimit.Fixed(2);
        Assert.True(limit.TryAcquire());
        Assert.True(limit.TryAcquire());

        var run = Enumerable.Range(0, 50).ToArray().FanOutAsync(async (i, ct) =>
        {
            await Task.Yield();
            return i * 3;
        }, new FanOutOptions { Limit = limit });

        await Task.Delay(20);
        Assert.False(run.IsCompleted, "the call ended while every permit was held outside it");
        limit.Release();
        limit.Release();

        Assert.Equal(Enumerable.Range(0, 50).Select(i => i * 3), await run.WithTimeout());
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public async Task FanOutAsync_SynchronousBodies_OnePermitHeldOutside_RunsEveryItem()
    {
        var limit = ConcurrencyLimit.Fixed(3);
        Assert.True(limit.TryAcquire());
        var ran = 0;
        var release = Task.Run(async () =>
        {
            await Task.Delay(5);
            limit.Release();
        });

        await Enumerable.Range(0, 20_000).FanOutAsync((i, ct) =>
        {
            Interlocked.Increment(ref ran);
            return ValueTask.CompletedTask;
        }, new FanOutOptions { Limit = limit }).WithTimeout();
        await release;

        Assert.Equal(20_000, ran);
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public async Task OrderedStream_EveryPermitHeldOutside_WaitsAndYieldsEveryItem()
    {
        var limit = ConcurrencyLimit.Fixed(1);
        Assert.True(limit.TryAcquire());
        var releaser = Task.Run(async () =>
        {
            await Task.Delay(20);
            limit.Release();
        });

        var seen = new List<int>();
        await foreach (var value in Enumerable.Range(0, 30).ToArray().FanOutStream((i, ct) => new ValueTask<int>(i), new FanOutOptions { Limit = limit, Ordered = true }))
        {
            seen.Add(value);
        }

        await releaser;
        Assert.Equal(Enumerable.Range(0, 30), seen);
    }
}
