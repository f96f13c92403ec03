using System.Threading.RateLimiting;

using Xunit;

namespace FanOut.Limits.Contract;

/// <summary>
/// What System.Threading.RateLimiting promises of every <see cref="RateLimiter"/>, re-expressed from dotnet/runtime's
/// <c>BaseRateLimiterTests</c>: argument checks, cancellation, disposal and the statistics' counts. Concurrency limits add
/// <see cref="ConcurrencyRateLimiterContract"/>; a rate limit (FanOut.Redis' fleet rate) derives from this directly.
/// </summary>
/// <remarks>Waits that must complete are guarded by <see cref="Guard"/>; waits that must not are checked to be incomplete, never timed.</remarks>
public abstract class RateLimiterContract
{
    /// <summary>How long a wait that must complete may take before the test fails (generous: the machine is shared).</summary>
    protected static readonly TimeSpan Guard = TimeSpan.FromSeconds(30);

    /// <summary>Makes a limiter of one permit: once <see cref="TakeTheOnlyPermitAsync"/> has it, an <c>AcquireAsync(1)</c> waits.</summary>
    protected abstract RateLimiter CreateOfOnePermit();

    /// <summary>Takes the only permit of a limiter made by <see cref="CreateOfOnePermit"/>.</summary>
    protected abstract Task<RateLimitLease> TakeTheOnlyPermitAsync(RateLimiter limiter);

    [Fact]
    public async Task Acquire_NegativeCount_ThrowsArgumentOutOfRange()
    {
        using var limiter = CreateOfOnePermit();

        Assert.Throws<ArgumentOutOfRangeException>(() => limiter.AttemptAcquire(-1));
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await limiter.AcquireAsync(-1));
    }

    [Fact]
    public async Task Acquire_MoreThanTheLimitCanGrant_ThrowsArgumentOutOfRange()
    {
        using var limiter = CreateOfOnePermit();

        Assert.Throws<ArgumentOutOfRangeException>(() => limiter.AttemptAcquire(2));
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await limiter.AcquireAsync(2));
    }

    [Fact]
    public async Task Acquire_ZeroWhileAPermitIsFree_SucceedsAndIsCounted()
    {
        using var limiter = CreateOfOnePermit();

        using var attempt = limiter.AttemptAcquire(0);
        using var acquired = await limiter.AcquireAsync(0).AsTask().WaitAsync(Guard);

        Assert.True(attempt.IsAcquired);
        Assert.True(acquired.IsAcquired);
        Assert.Equal((2L, 0L), (limiter.GetStatistics()!.TotalSuccessfulLeases, limiter.GetStatistics()!.TotalFailedLeases));
    }

    [Fact]
    public async Task AcquireAsync_Granted_IsCountedAsSuccessful()
    {
        using var limiter = CreateOfOnePermit();

        using var lease = await TakeTheOnlyPermitAsync(limiter);

        Assert.True(lease.IsAcquired);
        Assert.Equal(1, limiter.GetStatistics()!.TotalSuccessfulLeases);
    }

    [Fact]
    public async Task AcquireAsync_CanceledBeforeQueuing_ThrowsAndTakesNothing()
    {
        using var limiter = CreateOfOnePermit();
        using var held = await TakeTheOnlyPermitAsync(limiter);
        using var cts = new CancellationTokenSource();
        cts.Cancel();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await limiter.AcquireAsync(1, cts.Token));

        Assert.Equal(0, limiter.GetStatistics()!.CurrentQueuedCount);
    }

    [Fact]
    public async Task AcquireAsync_CanceledWhileQueued_ThrowsAndLeavesTheQueue()
    {
        using var limiter = CreateOfOnePermit();
        using var held = await TakeTheOnlyPermitAsync(limiter);
        using var cts = new CancellationTokenSource();
        var canceled = limiter.AcquireAsync(1, cts.Token).AsTask();
        Assert.False(canceled.IsCompleted);
        Assert.Equal(1, limiter.GetStatistics()!.CurrentQueuedCount);

        cts.Cancel();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => canceled.WaitAsync(Guard));
        Assert.Equal(0, limiter.GetStatistics()!.CurrentQueuedCount);
    }

    [Fact]
    public async Task Dispose_CompletesQueuedAcquiresWithFailedLeasesThenThrowsObjectDisposed()
    {
        var limiter = CreateOfOnePermit();
        using var held = await TakeTheOnlyPermitAsync(limiter);
        var waiting = limiter.AcquireAsync().AsTask();
        Assert.False(waiting.IsCompleted);

        limiter.Dispose();

        Assert.False((await waiting.WaitAsync(Guard)).IsAcquired);
        Assert.Throws<ObjectDisposedException>(() => limiter.AttemptAcquire());
        await Assert.ThrowsAsync<ObjectDisposedException>(async () => await limiter.AcquireAsync());
        Assert.Throws<ObjectDisposedException>(() => limiter.GetStatistics());
    }

    [Fact]
    public async Task DisposeAsync_CompletesQueuedAcquiresWithFailedLeasesThenThrowsObjectDisposed()
    {
        var limiter = CreateOfOnePermit();
        using var held = await TakeTheOnlyPermitAsync(limiter);
        var waiting = limiter.AcquireAsync().AsTask();
        Assert.False(waiting.IsCompleted);

        await limiter.DisposeAsync();

        Assert.False((await waiting.WaitAsync(Guard)).IsAcquired);
        Assert.Throws<ObjectDisposedException>(() => limiter.AttemptAcquire());
        await Assert.ThrowsAsync<ObjectDisposedException>(async () => await limiter.AcquireAsync());
        Assert.Throws<ObjectDisposedException>(() => limiter.GetStatistics());
    }

    [Fact]
    public void Dispose_Twice_DoesNotThrow()
    {
        var limiter = CreateOfOnePermit();

        limiter.Dispose();
        limiter.Dispose();
    }

    [Fact]
    public void GetStatistics_IsASnapshot_NewOnEveryCall()
    {
        using var limiter = CreateOfOnePermit();

        Assert.NotSame(limiter.GetStatistics(), limiter.GetStatistics());
    }
}
