using System.Threading.RateLimiting;

using Xunit;

namespace FanOut.Limits.Contract;

/// <summary>
/// What System.Threading.RateLimiting promises of a concurrency <see cref="RateLimiter"/> beyond every limiter's
/// <see cref="RateLimiterContract"/>, re-expressed from dotnet/runtime's <c>ConcurrencyLimiterTests</c> (the ones about
/// queue limits and newest-first order are left out: FanOut's limits have neither, docs/limits.md). Every
/// <see cref="RateLimiter"/> of a concurrency limit FanOut ships derives from this once and says how to make one of a given capacity.
/// </summary>
public abstract class ConcurrencyRateLimiterContract : RateLimiterContract
{
    /// <summary>Makes a limiter that grants exactly <paramref name="capacity"/> leases of one permit at once.</summary>
    protected abstract RateLimiter Create(int capacity);

    /// <inheritdoc/>
    protected sealed override RateLimiter CreateOfOnePermit() => Create(1);

    /// <inheritdoc/>
    protected sealed override Task<RateLimitLease> TakeTheOnlyPermitAsync(RateLimiter limiter) => Task.FromResult(limiter.AttemptAcquire());

    [Fact]
    public void AttemptAcquire_UpToTheCapacity_SucceedsThenFailsUntilALeaseIsDisposed()
    {
        using var limiter = Create(2);
        using var a = limiter.AttemptAcquire();
        using var b = limiter.AttemptAcquire();
        using var c = limiter.AttemptAcquire();

        Assert.True(a.IsAcquired);
        Assert.True(b.IsAcquired);
        Assert.False(c.IsAcquired);
        a.Dispose();
        using var d = limiter.AttemptAcquire();
        Assert.True(d.IsAcquired);
    }

    [Fact]
    public async Task AcquireAsync_WhenFull_WaitsAndIsServedOldestFirst()
    {
        using var limiter = Create(1);
        var held = limiter.AttemptAcquire();
        var first = limiter.AcquireAsync().AsTask();
        var second = limiter.AcquireAsync().AsTask();
        Assert.False(first.IsCompleted);

        held.Dispose();
        var lease = await first.WaitAsync(Guard);

        Assert.True(lease.IsAcquired);
        Assert.False(second.IsCompleted);
        lease.Dispose();
        (await second.WaitAsync(Guard)).Dispose();
    }

    [Fact]
    public async Task AttemptAcquire_WhileOthersWait_FailsSoTheQueueKeepsItsOrder()
    {
        using var limiter = Create(1);
        var held = limiter.AttemptAcquire();
        var waiting = limiter.AcquireAsync().AsTask();

        held.Dispose();
        using var barged = limiter.AttemptAcquire();

        Assert.False(barged.IsAcquired); // the permit went to the waiter
        (await waiting.WaitAsync(Guard)).Dispose();
    }

    [Fact]
    public void AttemptAcquire_Zero_SucceedsWhileAPermitIsFreeAndFailsWhenNone()
    {
        using var limiter = Create(1);
        using var probe = limiter.AttemptAcquire(0);
        Assert.True(probe.IsAcquired);

        using var held = limiter.AttemptAcquire();
        using var none = limiter.AttemptAcquire(0);

        Assert.False(none.IsAcquired);
        using var still = limiter.AttemptAcquire();
        Assert.False(still.IsAcquired); // the successful probe took nothing
    }

    [Fact]
    public async Task AcquireAsync_Zero_CompletesAtOnceWhenFreeAndWaitsForAPermitWhenNone()
    {
        using var limiter = Create(1);
        using (var probe = await limiter.AcquireAsync(0))
        {
            Assert.True(probe.IsAcquired);
        }

        var held = limiter.AttemptAcquire();
        var waiting = limiter.AcquireAsync(0).AsTask();
        Assert.False(waiting.IsCompleted);

        held.Dispose();
        using var lease = await waiting.WaitAsync(Guard);
        Assert.True(lease.IsAcquired);
        using var after = limiter.AttemptAcquire();
        Assert.True(after.IsAcquired); // a zero-permit lease holds nothing
    }

    [Fact]
    public async Task AcquireAsync_CanceledWhileQueued_ThePermitGoesToTheNextWaiter()
    {
        using var limiter = Create(1);
        var held = limiter.AttemptAcquire();
        using var cts = new CancellationTokenSource();
        var canceled = limiter.AcquireAsync(1, cts.Token).AsTask();
        var next = limiter.AcquireAsync().AsTask();

        cts.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => canceled.WaitAsync(Guard));
        Assert.Equal(1, limiter.GetStatistics()!.CurrentQueuedCount);

        held.Dispose();
        using var lease = await next.WaitAsync(Guard); // the permit went to the next waiter, not to the canceled one
        Assert.True(lease.IsAcquired);
    }

    [Fact]
    public void LeaseDispose_Twice_GivesThePermitBackOnce()
    {
        using var limiter = Create(1);
        var lease = limiter.AttemptAcquire();

        lease.Dispose();
        lease.Dispose();
        using var a = limiter.AttemptAcquire();
        using var b = limiter.AttemptAcquire();

        Assert.True(a.IsAcquired);
        Assert.False(b.IsAcquired);
    }

    [Fact]
    public async Task GetStatistics_CountsAvailableQueuedSuccessfulAndFailed()
    {
        using var limiter = Create(2);
        var first = limiter.GetStatistics()!;
        Assert.Equal((2L, 0L, 0L, 0L), (first.CurrentAvailablePermits, first.CurrentQueuedCount, first.TotalSuccessfulLeases, first.TotalFailedLeases));

        var a = limiter.AttemptAcquire();
        using var b = limiter.AttemptAcquire();
        using var failed = limiter.AttemptAcquire();
        var waiting = limiter.AcquireAsync().AsTask();
        var statistics = limiter.GetStatistics()!;

        Assert.Equal((0L, 1L, 2L, 1L), (statistics.CurrentAvailablePermits, statistics.CurrentQueuedCount, statistics.TotalSuccessfulLeases, statistics.TotalFailedLeases));
        a.Dispose();
        (await waiting.WaitAsync(Guard)).Dispose();
        statistics = limiter.GetStatistics()!;
        Assert.Equal((1L, 0L, 3L, 1L), (statistics.CurrentAvailablePermits, statistics.CurrentQueuedCount, statistics.TotalSuccessfulLeases, statistics.TotalFailedLeases));
    }

    [Fact]
    public void GetStatistics_ZeroPermitRequests_AreCountedAsTheRuntimesLimitersCountThem()
    {
        using var limiter = Create(1);
        limiter.AttemptAcquire(0).Dispose();
        using var held = limiter.AttemptAcquire();
        limiter.AttemptAcquire(0).Dispose();

        var statistics = limiter.GetStatistics()!;

        Assert.Equal(2, statistics.TotalSuccessfulLeases);
        Assert.Equal(1, statistics.TotalFailedLeases);
    }

    [Fact]
    public async Task GetStatistics_UnderConcurrentAcquires_CountsEveryLeaseExactly()
    {
        using var limiter = Create(4);
        const int Workers = 8, Each = 200;

        await Task.WhenAll(Enumerable.Range(0, Workers).Select(_ => Task.Run(async () =>
        {
            for (var i = 0; i < Each; i++)
            {
                using var lease = await limiter.AcquireAsync();
                Assert.True(lease.IsAcquired);
            }
        }))).WaitAsync(Guard);

        var statistics = limiter.GetStatistics()!;
        Assert.Equal(Workers * Each, statistics.TotalSuccessfulLeases);
        Assert.Equal(0, statistics.TotalFailedLeases);
        Assert.Equal(4, statistics.CurrentAvailablePermits);
        Assert.Equal(0, statistics.CurrentQueuedCount);
    }

    [Fact]
    public void IdleDuration_NullWhileALeaseIsHeld_ThenNonNegative()
    {
        using var limiter = Create(1);
        Assert.NotNull(limiter.IdleDuration);

        var lease = limiter.AttemptAcquire();
        Assert.Null(limiter.IdleDuration);

        lease.Dispose();
        Assert.True(limiter.IdleDuration >= TimeSpan.Zero);
    }

    [Fact]
    public void Lease_Metadata_IsEmptyAndReadsNothing()
    {
        using var limiter = Create(1);
        using var lease = limiter.AttemptAcquire();

        Assert.Empty(lease.MetadataNames);
        Assert.False(lease.TryGetMetadata(MetadataName.RetryAfter, out _));
        Assert.False(lease.TryGetMetadata("anything", out var value));
        Assert.Null(value);
    }
}
