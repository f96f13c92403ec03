using System.Diagnostics;
using System.Threading.RateLimiting;

using FanOut.Tests.Infrastructure;

namespace FanOut.Tests.Hardening;

/// <summary>
/// The defects of issue "One permit protocol", each a test that failed on the code before the protocol became one type
/// (a hang shows as the 20 s guard of <see cref="Wait"/>; a leak as <see cref="ConcurrencyLimit.InFlight"/> above 0).
/// None waits for the clock: each waits for the event it needs, and a wait that never ends is the failure.
/// </summary>
public sealed class PermitProtocolRegressionTests
{
    [Fact]
    public async Task FanOutStream_ConsumerRunsFanOutOnSameFixed1_NoDeadlock()
    {
        // The stream's worker filled the channel, found the limit unshared at that instant, and waited for the consumer
        // holding the only permit; the consumer's FanOutAsync on the same limit then waited for that permit forever.
        var limit = ConcurrencyLimit.Fixed(1);
        var options = new FanOutOptions { Limit = limit };
        var produced = 0;
        var consumed = 0;
        var run = Task.Run(async () =>
        {
            await foreach (var value in Enumerable.Range(0, 3000).ToArray().FanOutStream((i, _) => { Interlocked.Increment(ref produced); return new ValueTask<int>(i); }, options))
            {
                if (consumed == 0)
                {
                    // Let the worker fill the channel (1,024) and block on the next write before the consumer needs the limit.
                    await Wait.UntilAsync(() => Volatile.Read(ref produced) > StreamCapacity, "the stream filled its channel");
                }

                var inner = await new[] { value, value + 1 }.FanOutAsync((x, _) => new ValueTask<int>(x), options);
                Assert.Equal([value, value + 1], inner);
                consumed++;
            }
        });

        await run.WithTimeout();
        Assert.Equal(3000, consumed);
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public async Task RateLimiterLeaseQueued_SecondCallOnSameFixed1_RunsMeanwhile()
    {
        // A worker queued for a lease kept its permit ("a fixed limit the call alone uses"): a second call on the same
        // Fixed(1) then waited with no body running anywhere.
        var limit = ConcurrencyLimit.Fixed(1);
        using var never = new GatedRateLimiter();
        using var stopA = new CancellationTokenSource();
        var callA = Enumerable.Range(0, 5).ToArray().FanOutAsync((i, _) => new ValueTask<int>(i), new FanOutOptions { Limit = limit, RateLimiter = never }, stopA.Token);
        await Wait.UntilAsync(() => never.Queued > 0, "call A queued for a lease");

        var resultsB = await Enumerable.Range(0, 3).ToArray().FanOutAsync((i, _) => new ValueTask<int>(i * 10), new FanOutOptions { Limit = limit }).WithTimeout();

        Assert.Equal([0, 10, 20], resultsB);
        await stopA.CancelAsync();
        await callA.Settled();
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public async Task CallWithAllItemsDone_OtherCallHoldsTheOnlyPermit_ReturnsWithoutWaitingForIt()
    {
        // Call A's one item finished; its worker then waited for one more permit, held by call B's long item, before it
        // found no item left (Fixed(1): a 1.5 s item's call returned at 3.0 s).
        var limit = ConcurrencyLimit.Fixed(1);
        var options = new FanOutOptions { Limit = limit };
        var releaseA = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var releaseB = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var startedB = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var startedA = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);

        var callA = new[] { 1 }.FanOutAsync(async (i, _) => { startedA.TrySetResult(); await releaseA.Task; return i; }, options);
        await startedA.Task.WithTimeout();
        var callB = new[] { 2 }.FanOutAsync(async (i, _) => { startedB.TrySetResult(); await releaseB.Task; return i; }, options);
        await Wait.UntilAsync(() => limit.Waiting > 0, "call B waits for the permit");

        releaseA.SetResult();
        await startedB.Task.WithTimeout();
        Assert.Equal(new[] { 1 }, await callA.WithTimeout()); // B's item still runs: A must not wait for it

        releaseB.SetResult();
        Assert.Equal(new[] { 2 }, await callB.WithTimeout());
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public async Task CallWithAllItemsDone_QueuedAsRateLimiterLeaseTakesThePermit_ReturnsWhileTheLeaseIsHeld()
    {
        var limit = ConcurrencyLimit.Fixed(1);
        using var leases = limit.AsRateLimiter();
        var releaseA = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var startedA = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);

        var callA = new[] { 7 }.FanOutAsync(async (i, _) => { startedA.TrySetResult(); await releaseA.Task; return i; }, new FanOutOptions { Limit = limit });
        await startedA.Task.WithTimeout();
        var leaseTask = leases.AcquireAsync(1).AsTask();
        await Wait.UntilAsync(() => limit.Waiting > 0, "the lease waits for the permit");

        releaseA.SetResult();
        using var lease = await leaseTask.WithTimeout();
        Assert.True(lease.IsAcquired);
        Assert.Equal(new[] { 7 }, await callA.WithTimeout()); // returns while the lease is still held
    }

    [Fact]
    public async Task DisposedRateLimiter_ThrowsFromAttemptAcquire_NoPermitLeaks()
    {
        // AttemptAcquire threw while the worker held its permit, which nothing gave back: every later call on the limit hung.
        var limit = ConcurrencyLimit.Fixed(1);
        var disposed = new TokenBucketRateLimiter(new TokenBucketRateLimiterOptions { TokenLimit = 1, TokensPerPeriod = 1, ReplenishmentPeriod = TimeSpan.FromSeconds(1), QueueLimit = 10 });
        disposed.Dispose();

        var failed = await Enumerable.Range(0, 4).ToArray().FanOutAsync((i, _) => new ValueTask<int>(i), new FanOutOptions { Limit = limit, RateLimiter = disposed }).Settled();

        Assert.IsType<ObjectDisposedException>(failed.Exception!.InnerException);
        Assert.Equal(0, limit.InFlight);
        Assert.Equal(new[] { 0, 1 }, await new[] { 0, 1 }.FanOutAsync((i, _) => new ValueTask<int>(i), new FanOutOptions { Limit = limit }).WithTimeout());
    }

    [Fact]
    public async Task RateLimiterThrowsFromAcquireAsync_NoPermitOrQueuePlaceLeaks()
    {
        var limit = ConcurrencyLimit.Fixed(2);
        using var throwing = new GatedRateLimiter { ThrowOnWait = true };

        var failed = await Enumerable.Range(0, 6).ToArray().FanOutAsync((i, _) => new ValueTask<int>(i), new FanOutOptions { Limit = limit, RateLimiter = throwing }).Settled();

        Assert.IsType<ObjectDisposedException>(failed.Exception!.InnerException);
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public async Task UserLimitStartHookThrows_ThroughAsRateLimiter_PermitGoesBack()
    {
        // The lease's constructor called the limit's start hook after the permit was taken; when it threw, no lease
        // existed to give the permit back: a limit of 1 then hung every later caller.
        var limit = new ThrowingStartLimit(capacity: 1);
        using var leases = limit.AsRateLimiter();

        Assert.Throws<InvalidOperationException>(() => leases.AttemptAcquire(1));
        Assert.Equal(0, limit.InFlight);
        await Assert.ThrowsAsync<InvalidOperationException>(async () => await leases.AcquireAsync(1));
        Assert.Equal(0, limit.InFlight);

        limit.Throws = false;
        using var lease = await leases.AcquireAsync(1).AsTask().WithTimeout();
        Assert.True(lease.IsAcquired);
    }

    [Fact]
    public async Task UserLimitStartHookThrows_InALoop_CallFailsAndPermitsGoBack()
    {
        var limit = new ThrowingStartLimit(capacity: 2);

        var failed = await Enumerable.Range(0, 10).ToArray().FanOutAsync((i, _) => new ValueTask<int>(i), new FanOutOptions { Limit = limit }).Settled();

        Assert.IsType<InvalidOperationException>(failed.Exception!.InnerException);
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public async Task ThrowingActivityListener_CallFailsAndPermitsGoBack()
    {
        // The listener is process-wide: it samples and throws only in this test's flow (the call's workers capture it), so
        // calls of tests running beside this one are not traced, let alone failed.
        var limit = ConcurrencyLimit.Fixed(2);
        s_throwingListenerHere.Value = true;
        using var listener = new ActivityListener
        {
            ShouldListenTo = source => source.Name == "FanOut",
            Sample = (ref ActivityCreationOptions<ActivityContext> _) => s_throwingListenerHere.Value ? ActivitySamplingResult.AllDataAndRecorded : ActivitySamplingResult.None,
            ActivityStarted = activity =>
            {
                if (s_throwingListenerHere.Value && activity.OperationName == "FanOut.Item")
                {
                    throw new InvalidOperationException("listener failed");
                }
            },
        };
        ActivitySource.AddActivityListener(listener);

        var failed = await Enumerable.Range(0, 10).ToArray().FanOutAsync((i, _) => new ValueTask<int>(i), new FanOutOptions { Limit = limit }).Settled();

        Assert.True(failed.IsFaulted);
        Assert.Equal(0, limit.InFlight);
    }

    [Theory]
    [InlineData("settable")]
    [InlineData("adaptive")]
    [InlineData("partitioned")]
    public async Task TokenBucket_EveryLimitKind_QueuesAtMostTheLimitForLeases(string kind)
    {
        // Settable(8) with a token bucket and 200 items: 102 workers queued at the rate limiter at once (docs: at most the limit).
        const int Items = 200;
        var limit = kind switch
        {
            "settable" => ConcurrencyLimit.Settable(8),
            "adaptive" => ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { InitialLimit = 8, MaxLimit = 8 }),
            _ => ConcurrencyLimit.Partitioned<string>(8, _ => ConcurrencyLimit.Fixed(8)).ForKey("a"),
        };
        using var bucket = new TokenBucketRateLimiter(new TokenBucketRateLimiterOptions
        {
            TokenLimit = 1,
            TokensPerPeriod = 1,
            ReplenishmentPeriod = TimeSpan.FromMilliseconds(1),
            AutoReplenishment = false,
            QueueLimit = int.MaxValue,
        });
        var run = Enumerable.Range(0, Items).ToArray().FanOutAsync(async (i, _) => { await Task.Yield(); return i; }, new FanOutOptions { Limit = limit, RateLimiter = bucket });

        long queuedPeak = 0;
        var deadline = DateTime.UtcNow + Wait.Timeout;
        while (!run.IsCompleted && DateTime.UtcNow < deadline)
        {
            queuedPeak = Math.Max(queuedPeak, bucket.GetStatistics()!.CurrentQueuedCount);
            bucket.TryReplenish();
            await Task.Delay(1);
        }

        Assert.Equal(Enumerable.Range(0, Items), await run.WithTimeout());
        Assert.True(queuedPeak <= 8, $"{queuedPeak} workers queued for leases with a limit of 8 ({kind})");
        Assert.True(bucket.GetStatistics()!.TotalSuccessfulLeases <= Items + 1, $"{bucket.GetStatistics()!.TotalSuccessfulLeases} tokens for {Items} items");
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public async Task Partitioned_MaxIdleKeysZero_ForKeyReturns()
    {
        // The idle sweep dropped the new, unpinned entry and the lookup made it again, forever: the first ForKey hung.
        var limit = ConcurrencyLimit.Partitioned<string>(4, _ => ConcurrencyLimit.Fixed(2), new PartitionedLimitOptions { MaxIdleKeys = 0 });

        var key = await Task.Run(() => limit.ForKey("a")).WithTimeout();

        Assert.True(key.TryAcquire());
        key.Release();
        Assert.Equal(0, key.InFlight);
    }

    [Fact]
    public async Task Partitioned_BusyKeysReachMaxIdleKeys_NewKeyStillReturns()
    {
        var limit = ConcurrencyLimit.Partitioned<int>(100, _ => ConcurrencyLimit.Fixed(1), new PartitionedLimitOptions { MaxIdleKeys = 4 });
        var busy = Enumerable.Range(0, 4).Select(limit.ForKey).ToList();
        foreach (var key in busy)
        {
            Assert.True(key.TryAcquire());
        }

        var fifth = await Task.Run(() => limit.ForKey(4)).WithTimeout();
        Assert.True(fifth.TryAcquire());
        fifth.Release();
        foreach (var key in busy)
        {
            key.Release();
        }

        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public async Task UserLimitWithPermitsElsewhere_LeaseWaitsBesideALoop_IsServedWithinAFewItems()
    {
        // docs/limits.md's recipe (a SemaphoreSlim, WaitAsyncCore overridden): the loop's workers kept their permits between
        // items because the base class saw no waiter in its own queue, and a lease got its first permit after all 300 items.
        var limit = new SemaphoreLimit(2);
        using var leases = limit.AsRateLimiter();
        var started = 0;
        var tenStarted = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);

        var loop = Enumerable.Range(0, 300).ToArray().FanOutAsync(
            async (i, ct) =>
            {
                if (Interlocked.Increment(ref started) == 10)
                {
                    tenStarted.SetResult();
                    await gate.Task; // hold one permit until the lease queues (outside any item's flow)
                }

                // A timer wait, not Task.Yield: yielded bodies go through the pool's local queues and could starve the
                // lease's continuation (queued globally) long after the permit was handed to it.
                await Task.Delay(1, ct);
                return i;
            },
            new FanOutOptions { Limit = limit });

        await tenStarted.Task.WithTimeout();
        var leaseTask = leases.AcquireAsync(1).AsTask();
        var startedAtGrant = -1;
        var granted = leaseTask.ContinueWith(_ => { startedAtGrant = Volatile.Read(ref started); }, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        gate.SetResult();
        using var lease = await leaseTask.WithTimeout();
        await granted.WithTimeout();
        lease.Dispose();
        await loop.WithTimeout();

        Assert.True(startedAtGrant is > 0 and <= 150, $"the lease was granted after {startedAtGrant} of 300 items started");
        Assert.Equal(0, limit.InFlight);
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    public async Task NestedLeaseOnTheItemsLimit_LoopHoldsEveryPermit_NoDeadlock(int capacity)
    {
        // docs/limits.md shares one limit between a loop and the HttpClient its bodies call: each item needed two permits
        // and the loop deadlocked once it held them all.
        var limit = ConcurrencyLimit.Fixed(capacity);
        using var leases = limit.AsRateLimiter();
        var running = new ConcurrencyProbe();

        var results = await Enumerable.Range(0, 20).ToArray().FanOutAsync(
            async (i, ct) =>
            {
                using var lease = await leases.AcquireAsync(1, ct);
                Assert.True(lease.IsAcquired);
                running.Enter();
                await Task.Yield();
                running.Exit();

                return i;
            },
            new FanOutOptions { Limit = limit }).WithTimeout();

        Assert.Equal(Enumerable.Range(0, 20), results);
        Assert.True(running.Max <= capacity, $"{running.Max} bodies at once under a limit of {capacity}");
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public async Task NestedFanOutOnTheItemsLimit_EveryPermitHeldByOuterItems_InnerCallsProgress()
    {
        var limit = ConcurrencyLimit.Fixed(2);
        var options = new FanOutOptions { Limit = limit };
        var running = new ConcurrencyProbe();

        var sums = await Enumerable.Range(0, 6).ToArray().FanOutAsync(
            async (i, ct) =>
            {
                var inner = await Enumerable.Range(0, 10).ToArray().FanOutAsync(
                    async (x, _) =>
                    {
                        running.Enter();
                        await Task.Yield();
                        running.Exit();

                        return x;
                    },
                    options,
                    ct);
                return inner.Sum() + i;
            },
            options).WithTimeout();

        Assert.Equal(Enumerable.Range(0, 6).Select(i => 45 + i), sums);
        Assert.True(running.Max <= 2, $"{running.Max} inner bodies at once under a limit of 2");
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public async Task NestedLeaseOutsideAnItem_TakesItsOwnPermit()
    {
        var limit = ConcurrencyLimit.Fixed(1);
        using var leases = limit.AsRateLimiter();

        using var lease = leases.AttemptAcquire(1);

        Assert.True(lease.IsAcquired);
        Assert.Equal(1, limit.InFlight);
        Assert.False(leases.AttemptAcquire(1).IsAcquired);
    }

    [Theory]
    [InlineData("adaptive", 3, true)]
    [InlineData("adaptive", 0, false)]
    [InlineData("fixed", 3, false)]
    public async Task FanOutItem_WillRerun_SaysWhetherTheCallRunsAnOverloadedItemAgain(string kind, int retries, bool expected)
    {
        // An inner layer (FanOut.Http's handler) asks before it re-sends: one layer re-runs, never both (9 x 9 = 81 sends).
        var limit = kind == "adaptive" ? ConcurrencyLimit.Adaptive() : ConcurrencyLimit.Fixed(2);
        bool? seen = null;

        await new[] { 1 }.FanOutAsync((i, _) => { seen = FanOutItem.WillRerun(new OverloadedException("busy")); return new ValueTask<int>(i); }, new FanOutOptions { Limit = limit, OverloadRetries = retries });

        Assert.Equal(expected, seen);
        Assert.False(FanOutItem.IsRunning); // the caller's own flow is not the call's
        Assert.False(FanOutItem.WillRerun(new OverloadedException("busy")));
    }

    [Fact]
    public void TryAcquire_LimitLoweredBetweenItsLookAndItsTake_GrantsNothingAboveTheNewLimit()
    {
        // Found by the systematic tests: TryTakePermit compared against a Current read before its compare-and-swap, so a
        // Set(1) landing in between let a second permit through (2-4 bodies under a limit lowered to 1).
        var limit = new ScriptedCurrentLimit(3, 3, 3, 1);

        Assert.True(limit.TryAcquire());
        Assert.False(limit.TryAcquire());
        Assert.Equal(1, limit.InFlight);
    }

    /// <summary>A limit whose <see cref="ConcurrencyLimit.Current"/> returns a script of values, one per read, then the last forever.</summary>
    private sealed class ScriptedCurrentLimit(params int[] script) : ConcurrencyLimit
    {
        private int _reads;

        public override int Current => script[Math.Min(Interlocked.Increment(ref _reads), script.Length) - 1];

        public override string Kind => "scripted";
    }

    /// <summary>Set in the flow of the test whose activity listener throws (see ThrowingActivityListener_...).</summary>
    private static readonly AsyncLocal<bool> s_throwingListenerHere = new();

    /// <summary>Room for 1,024 results: a completion-order stream's least channel capacity.</summary>
    private const int StreamCapacity = 1024;

    /// <summary>A rate limiter that grants nothing until disposed; counts its queue, and may throw from AcquireAsync.</summary>
    private sealed class GatedRateLimiter : RateLimiter
    {
        private readonly CancellationTokenSource _disposed = new();
        private int _queued;

        public bool ThrowOnWait { get; init; }

        public int Queued => Volatile.Read(ref _queued);

        public override TimeSpan? IdleDuration => null;

        public override RateLimiterStatistics? GetStatistics() => new() { CurrentQueuedCount = Queued };

        protected override RateLimitLease AttemptAcquireCore(int permitCount) => new Lease(false);

        protected override async ValueTask<RateLimitLease> AcquireAsyncCore(int permitCount, CancellationToken cancellationToken)
        {
            if (ThrowOnWait)
            {
                throw new ObjectDisposedException(nameof(GatedRateLimiter));
            }

            Interlocked.Increment(ref _queued);
            try
            {
                using var linked = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, _disposed.Token);
                await Task.Delay(Timeout.Infinite, linked.Token);
                return new Lease(true);
            }
            finally
            {
                Interlocked.Decrement(ref _queued);
            }
        }

        protected override void Dispose(bool disposing)
        {
            _disposed.Cancel();
            base.Dispose(disposing);
        }

        private sealed class Lease(bool acquired) : RateLimitLease
        {
            public override bool IsAcquired => acquired;

            public override IEnumerable<string> MetadataNames => [];

            public override bool TryGetMetadata(string metadataName, out object? metadata)
            {
                metadata = null;
                return false;
            }
        }
    }

    /// <summary>A user limit that learns (<see cref="LimitTraits.LearnsFromWork"/>) and whose start hook throws while <see cref="Throws"/>.</summary>
    private sealed class ThrowingStartLimit(int capacity) : ConcurrencyLimit(LimitTraits.LearnsFromWork)
    {
        public bool Throws { get; set; } = true;

        public override int Current => capacity;

        public override string Kind => "throwing";

        protected override long OnItemStarting() => Throws ? throw new InvalidOperationException("start hook failed") : base.OnItemStarting();
    }

    /// <summary>docs/limits.md's "permits live elsewhere" recipe, as a user writes it.</summary>
    private sealed class SemaphoreLimit(int capacity) : ConcurrencyLimit
    {
        private readonly SemaphoreSlim _permits = new(capacity, capacity);

        public override int Current => capacity;

        public override string Kind => "semaphore";

        public override int InFlight => capacity - _permits.CurrentCount;

        protected override bool TryAcquireCore() => _permits.Wait(0);

        protected override async Task<bool> WaitAsyncCore(CancellationToken token)
        {
            try
            {
                await _permits.WaitAsync(token).ConfigureAwait(false);
                return true;
            }
            catch (OperationCanceledException) when (token.IsCancellationRequested)
            {
                return false;
            }
        }

        protected override void ReleaseCore() => _permits.Release();
    }
}
