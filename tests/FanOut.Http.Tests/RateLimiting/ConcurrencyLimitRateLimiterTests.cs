using System.Threading.RateLimiting;

using Microsoft.Extensions.Time.Testing;

namespace FanOut.Http.Tests.RateLimiting;

/// <summary>The bridge's own contract: one permit per lease, given back once, FIFO waits, cancellation, statistics, outcomes.</summary>
public sealed class ConcurrencyLimitRateLimiterTests
{
    /// <summary>A safety net so a broken wait fails the test instead of hanging the run; never an assertion on speed.</summary>
    private static readonly TimeSpan s_hang = TimeSpan.FromSeconds(30);

    [Fact]
    public void AttemptAcquire_AtTheLimit_FailsUntilALeaseIsDisposed()
    {
        var limit = ConcurrencyLimit.Fixed(2);
        using var limiter = limit.AsRateLimiter();

        var first = limiter.AttemptAcquire();
        var second = limiter.AttemptAcquire();
        var third = limiter.AttemptAcquire();

        Assert.True(first.IsAcquired);
        Assert.True(second.IsAcquired);
        Assert.False(third.IsAcquired);
        Assert.Equal(2, limit.InFlight);

        first.Dispose();
        Assert.Equal(1, limit.InFlight);
        using var fourth = limiter.AttemptAcquire();
        Assert.True(fourth.IsAcquired);
        second.Dispose();
    }

    [Fact]
    public void Dispose_Twice_GivesThePermitBackOnce()
    {
        var limit = ConcurrencyLimit.Fixed(1);
        using var limiter = limit.AsRateLimiter();
        var lease = Assert.IsType<ConcurrencyLease>(limiter.AttemptAcquire());

        lease.Dispose();
        lease.Dispose();

        Assert.True(lease.IsReleased);
        Assert.Equal(0, limit.InFlight);
        using var next = limiter.AttemptAcquire();
        Assert.True(next.IsAcquired);
        Assert.False(limiter.AttemptAcquire().IsAcquired); // a second Release would have made room for this one
        Assert.Equal(1, limit.InFlight);
    }

    [Fact]
    public void Limits_FanOutLoopAndLeases_ShareOnePool()
    {
        // The lease's permit is the limit's: a plain TryAcquire (what a fan-out worker does) sees it taken.
        var limit = ConcurrencyLimit.Fixed(1);
        using var limiter = limit.AsRateLimiter();
        using var lease = limiter.AttemptAcquire();

        Assert.False(limit.TryAcquire());
    }

    [Fact]
    public async Task FanOutAsync_WhileLeasesHoldEveryPermit_WaitsAndRunsEveryItem()
    {
        // A call whose workers find every permit taken retires them unless it sees the limit shared: it must not return
        // with its items never run because the permits were held by leases rather than by another fan-out call.
        var limit = ConcurrencyLimit.Fixed(2);
        using var limiter = limit.AsRateLimiter();
        var leases = new[] { limiter.AttemptAcquire(), limiter.AttemptAcquire() };
        var ran = 0;

        var loop = Enumerable.Range(0, 10).FanOutAsync(
            (i, ct) =>
            {
                Interlocked.Increment(ref ran);
                return ValueTask.CompletedTask;
            },
            new FanOutOptions { Limit = limit });
        await Task.Delay(50); // let the call's first workers find the pool empty (not a bound: the result is checked below)
        Assert.Equal(0, Volatile.Read(ref ran));
        foreach (var lease in leases)
        {
            lease.Dispose();
        }

        await loop.WaitAsync(s_hang);
        Assert.Equal(10, ran);
        Assert.Equal(0, limit.InFlight);
    }

    [Theory]
    [InlineData(2)]
    [InlineData(17)]
    public async Task Acquire_MoreThanOnePermit_ThrowsNamingTheCount(int permitCount)
    {
        using var limiter = ConcurrencyLimit.Fixed(64).AsRateLimiter();

        var attempt = Assert.Throws<ArgumentOutOfRangeException>(() => limiter.AttemptAcquire(permitCount));
        var acquire = await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await limiter.AcquireAsync(permitCount));

        Assert.Equal("permitCount", attempt.ParamName);
        Assert.Equal(permitCount, attempt.ActualValue);
        Assert.Equal(permitCount, acquire.ActualValue);
    }

    [Fact]
    public async Task Acquire_NegativeCount_Throws()
    {
        using var limiter = ConcurrencyLimit.Fixed(1).AsRateLimiter();

        Assert.Throws<ArgumentOutOfRangeException>(() => limiter.AttemptAcquire(-1));
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await limiter.AcquireAsync(-1));
    }

    [Fact]
    public async Task Acquire_ZeroPermits_ProbesWithoutTakingAPermit()
    {
        var limit = ConcurrencyLimit.Fixed(1);
        using var limiter = limit.AsRateLimiter();

        using (var probe = limiter.AttemptAcquire(0))
        {
            Assert.True(probe.IsAcquired);
        }

        Assert.Equal(0, limit.InFlight);
        var held = limiter.AttemptAcquire();
        Assert.False(limiter.AttemptAcquire(0).IsAcquired);

        // AcquireAsync(0) waits until a permit is free, then leaves it free.
        var waiting = limiter.AcquireAsync(0).AsTask();
        Assert.False(waiting.IsCompleted);
        held.Dispose();
        using var probed = await waiting.WaitAsync(s_hang);
        Assert.True(probed.IsAcquired);
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public async Task AcquireAsync_WhenFull_ServesWaitersOldestFirst()
    {
        var limit = ConcurrencyLimit.Fixed(1);
        using var limiter = limit.AsRateLimiter();
        var held = limiter.AttemptAcquire();

        var first = limiter.AcquireAsync().AsTask();
        var second = limiter.AcquireAsync().AsTask();
        Assert.False(first.IsCompleted);
        Assert.False(second.IsCompleted);
        Assert.False(limiter.AttemptAcquire().IsAcquired); // no barging past the queue

        held.Dispose();
        var firstLease = await first.WaitAsync(s_hang);
        Assert.True(firstLease.IsAcquired);
        Assert.False(second.IsCompleted);

        firstLease.Dispose();
        using var secondLease = await second.WaitAsync(s_hang);
        Assert.True(secondLease.IsAcquired);
        Assert.Equal(1, limit.InFlight);
    }

    [Fact]
    public async Task AcquireAsync_Canceled_ThrowsAndLeavesNoWaiterBehind()
    {
        var limit = ConcurrencyLimit.Fixed(1);
        using var limiter = limit.AsRateLimiter();
        var held = limiter.AttemptAcquire();
        using var cts = new CancellationTokenSource();

        var waiting = limiter.AcquireAsync(1, cts.Token).AsTask();
        Assert.Equal(1, limiter.GetStatistics()!.CurrentQueuedCount);
        cts.Cancel();

        var canceled = await Assert.ThrowsAnyAsync<OperationCanceledException>(() => waiting.WaitAsync(s_hang));
        Assert.Equal(cts.Token, canceled.CancellationToken);
        Assert.Equal(0, limiter.GetStatistics()!.CurrentQueuedCount);

        held.Dispose();
        Assert.Equal(0, limit.InFlight); // the canceled waiter was not handed the permit
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await limiter.AcquireAsync(1, cts.Token));
    }

    [Fact]
    public async Task Dispose_FailsItsOwnWaitersAndRefusesNewAcquires()
    {
        var limit = ConcurrencyLimit.Fixed(1);
        var limiter = limit.AsRateLimiter();
        var held = limiter.AttemptAcquire();
        var waiting = limiter.AcquireAsync().AsTask();

        limiter.Dispose();

        var failed = await waiting.WaitAsync(s_hang);
        Assert.False(failed.IsAcquired);
        Assert.Throws<ObjectDisposedException>(() => limiter.AttemptAcquire());
        await Assert.ThrowsAsync<ObjectDisposedException>(async () => await limiter.AcquireAsync());

        // The limit itself is untouched: the lease taken before still gives its permit back, and others can use it.
        held.Dispose();
        Assert.Equal(0, limit.InFlight);
        Assert.True(limit.TryAcquire());
    }

    [Fact]
    public async Task GetStatistics_CountsAvailableQueuedAndTotals()
    {
        var limit = ConcurrencyLimit.Fixed(3);
        using var limiter = limit.AsRateLimiter();
        Assert.True(limit.TryAcquire()); // a permit taken by someone else (a fan-out worker)
        var a = limiter.AttemptAcquire();
        var b = limiter.AttemptAcquire();
        Assert.False(limiter.AttemptAcquire().IsAcquired);
        var waiting = limiter.AcquireAsync().AsTask();

        var statistics = limiter.GetStatistics()!;
        Assert.Equal(0, statistics.CurrentAvailablePermits);
        Assert.Equal(1, statistics.CurrentQueuedCount);
        Assert.Equal(2, statistics.TotalSuccessfulLeases);
        Assert.Equal(1, statistics.TotalFailedLeases);

        a.Dispose();
        (await waiting.WaitAsync(s_hang)).Dispose();
        b.Dispose();
        limit.Release();
        statistics = limiter.GetStatistics()!;
        Assert.Equal(3, statistics.CurrentAvailablePermits);
        Assert.Equal(0, statistics.CurrentQueuedCount);
        Assert.Equal(3, statistics.TotalSuccessfulLeases);
    }

    [Fact]
    public void IdleDuration_NullWhileAPermitIsTaken_ThenTimeSinceTheLastLeaseWentBack()
    {
        var time = new FakeTimeProvider();
        var limit = new RecordingLimit(2, time);
        using var limiter = limit.AsRateLimiter();
        time.Advance(TimeSpan.FromSeconds(1));
        Assert.Equal(TimeSpan.FromSeconds(1), limiter.IdleDuration);

        var lease = limiter.AttemptAcquire();
        time.Advance(TimeSpan.FromSeconds(5));
        Assert.Null(limiter.IdleDuration);

        lease.Dispose();
        time.Advance(TimeSpan.FromSeconds(2));
        Assert.Equal(TimeSpan.FromSeconds(2), limiter.IdleDuration);

        Assert.True(limit.TryAcquire()); // taken by a fan-out worker: not idle either
        Assert.Null(limiter.IdleDuration);
        limit.Release();
    }

    [Fact]
    public void Dispose_ReportsDurationAndOutcomeToTheLimit()
    {
        var time = new FakeTimeProvider();
        var limit = new RecordingLimit(4, time);
        using var limiter = limit.AsRateLimiter();

        var plain = limiter.AttemptAcquire();
        var overloaded = Assert.IsType<ConcurrencyLease>(limiter.AttemptAcquire());
        var failed = Assert.IsType<ConcurrencyLease>(limiter.AttemptAcquire());
        time.Advance(TimeSpan.FromMilliseconds(300));
        overloaded.MarkOverloaded();
        overloaded.Dispose();
        time.Advance(TimeSpan.FromMilliseconds(200));
        plain.Dispose();
        failed.MarkFailed();
        failed.Dispose();
        failed.MarkOverloaded(); // after disposal: changes nothing
        failed.Dispose();

        Assert.Equal(3, limit.Started);
        Assert.Equal(
            [
                (TimeSpan.FromMilliseconds(300), ItemOutcome.Overloaded),
                (TimeSpan.FromMilliseconds(500), ItemOutcome.Succeeded),
                (TimeSpan.FromMilliseconds(500), ItemOutcome.Failed),
            ],
            limit.Completions);
    }

    [Fact]
    public void Leases_MarkedOverloaded_BackAnAdaptiveLimitOff()
    {
        // As the adaptive limit's own test of an overload burst, through leases: 16 taken, 8 rejected at once.
        var time = new FakeTimeProvider();
        var limit = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { InitialLimit = 16, TimeProvider = time });
        using var limiter = limit.AsRateLimiter();
        var leases = Enumerable.Range(0, 16).Select(_ => Assert.IsType<ConcurrencyLease>(limiter.AttemptAcquire())).ToList();
        Assert.Equal(16, limit.Current);

        time.Advance(TimeSpan.FromMilliseconds(0.2));
        foreach (var lease in leases.Skip(8))
        {
            lease.MarkOverloaded();
            lease.Dispose();
        }

        Assert.Equal(8, limit.Current);
        leases.Take(8).ToList().ForEach(l => l.Dispose());
    }

    [Fact]
    public void Leases_NotMarked_DoNotBackAnAdaptiveLimitOff()
    {
        // The same burst reported as successes: the limit does not drop (so the test above is about the mark).
        var time = new FakeTimeProvider();
        var limit = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { InitialLimit = 16, TimeProvider = time });
        using var limiter = limit.AsRateLimiter();
        var leases = Enumerable.Range(0, 16).Select(_ => limiter.AttemptAcquire()).ToList();

        time.Advance(TimeSpan.FromMilliseconds(0.2));
        leases.Skip(8).ToList().ForEach(l => l.Dispose());

        Assert.True(limit.Current >= 16, $"limit {limit.Current}");
        leases.Take(8).ToList().ForEach(l => l.Dispose());
    }

    /// <summary>A user's limit (public extension points only) that records what the limit is told.</summary>
    private sealed class RecordingLimit(int limit, TimeProvider time) : ConcurrencyLimit(LimitTraits.LearnsFromWork)
    {
        public override int Current => limit;

        public override string Kind => "recording";

        public override TimeProvider TimeProvider => time;

        public int Started { get; private set; }

        public List<(TimeSpan Duration, ItemOutcome Outcome)> Completions { get; } = [];

        protected override long OnItemStarting()
        {
            Started++;
            return base.OnItemStarting();
        }

        protected override void OnItemCompleted(long startTimestamp, ItemOutcome outcome) =>
            Completions.Add((time.GetElapsedTime(startTimestamp), outcome));
    }
}
