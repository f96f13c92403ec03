using Xunit;

namespace FanOut.Limits.Contract;

/// <summary>
/// What every <see cref="ConcurrencyLimit"/> promises, whoever wrote it: permits up to <see cref="ConcurrencyLimit.Current"/>
/// and no more, even under racing acquires; waiters served oldest first; a canceled wait returns false and takes nothing;
/// <see cref="ConcurrencyLimit.InFlight"/> back to 0 once everything is given back; fan-out calls on it (one, or two sharing
/// it) stay within it; learning hooks accept every outcome. A limit's test class derives from this once and says how to make
/// a limit of a given capacity (Channels' <c>ChannelTestBase</c> is the model).
/// </summary>
/// <remarks>
/// Waits that must not complete are checked with a short cancellation (the result must be false), never with a wall-clock bound
/// on how fast something happens; every wait that must complete is guarded by <see cref="Guard"/> so a broken limit fails the
/// test instead of hanging it.
/// </remarks>
public abstract class ConcurrencyLimitContract
{
    /// <summary>How long a wait that must complete may take before the test fails (generous: the machine is shared).</summary>
    protected static readonly TimeSpan Guard = TimeSpan.FromSeconds(30);

    /// <summary>How long a wait that must not complete is given before it is canceled.</summary>
    private static readonly TimeSpan s_notGranted = TimeSpan.FromMilliseconds(100);

    /// <summary>Makes a limit that grants exactly <paramref name="capacity"/> permits at once.</summary>
    protected abstract ValueTask<ConcurrencyLimit> CreateAsync(int capacity);

    /// <summary>False for a limit with no cap (the tests that fill it are then skipped by returning early).</summary>
    protected virtual bool HasCap => true;

    /// <summary>Disposes what <see cref="CreateAsync"/> made, if it needs it.</summary>
    protected virtual ValueTask DisposeAsync(ConcurrencyLimit limit) =>
        limit is IAsyncDisposable disposable ? disposable.DisposeAsync() : default;

    [Fact]
    public async Task NewLimit_DescribesItself()
    {
        var limit = await CreateAsync(3);
        try
        {
            Assert.False(string.IsNullOrWhiteSpace(limit.Kind));
            Assert.True(limit.Current >= 1, $"Current is {limit.Current}");
            Assert.True(limit.MaxCurrent >= limit.Current, $"MaxCurrent {limit.MaxCurrent} < Current {limit.Current}");
            Assert.True(limit.Peak >= limit.Current || !HasCap, $"Peak {limit.Peak} < Current {limit.Current}");
            Assert.Equal(0, limit.InFlight);
            Assert.NotNull(limit.TimeProvider);
            if (HasCap)
            {
                Assert.Equal(3, limit.Current);
            }
        }
        finally
        {
            await DisposeAsync(limit);
        }
    }

    [Fact]
    public async Task Acquire_UpToCurrent_ThenNoMore_UntilOneIsReleased()
    {
        if (!HasCap)
        {
            return;
        }

        var limit = await CreateAsync(3);
        try
        {
            for (var i = 0; i < 3; i++)
            {
                Assert.True(await AcquireAsync(limit), $"permit {i + 1} of 3 was not granted");
            }

            Assert.Equal(3, limit.InFlight);
            Assert.False(limit.TryAcquire());
            Assert.False(await WaitBrieflyAsync(limit), "a fourth permit was granted under a limit of 3");

            limit.Release();
            Assert.True(await AcquireAsync(limit), "the released permit was not granted again");
            Assert.Equal(3, limit.InFlight);

            for (var i = 0; i < 3; i++)
            {
                limit.Release();
            }

            Assert.Equal(0, limit.InFlight);
        }
        finally
        {
            await DisposeAsync(limit);
        }
    }

    [Fact]
    public async Task Release_GrantsTheOldestWaiterFirst()
    {
        if (!HasCap)
        {
            return;
        }

        var limit = await CreateAsync(1);
        try
        {
            Assert.True(await AcquireAsync(limit));
            var first = limit.WaitAsync(CancellationToken.None);
            var second = limit.WaitAsync(CancellationToken.None);
            Assert.False(first.IsCompleted);
            Assert.False(second.IsCompleted);

            limit.Release();
            Assert.True(await first.WaitAsync(Guard));
            Assert.False(await Task.WhenAny(second, Task.Delay(s_notGranted)) == second, "the second waiter was granted while the first held the only permit");

            limit.Release();
            Assert.True(await second.WaitAsync(Guard));
            limit.Release();
            Assert.Equal(0, limit.InFlight);
        }
        finally
        {
            await DisposeAsync(limit);
        }
    }

    [Fact]
    public async Task WaitAsync_CanceledBeforehand_ReturnsFalseAndTakesNothing()
    {
        var limit = await CreateAsync(2);
        try
        {
            Assert.False(await limit.WaitAsync(new CancellationToken(canceled: true)).WaitAsync(Guard));
            Assert.Equal(0, limit.InFlight);
        }
        finally
        {
            await DisposeAsync(limit);
        }
    }

    [Fact]
    public async Task WaitAsync_CanceledWhileWaiting_ReturnsFalse_AndTheNextPermitGoesToALiveWaiter()
    {
        if (!HasCap)
        {
            return;
        }

        var limit = await CreateAsync(1);
        try
        {
            Assert.True(await AcquireAsync(limit));
            using var cancel = new CancellationTokenSource();
            var abandoned = limit.WaitAsync(cancel.Token);
            var live = limit.WaitAsync(CancellationToken.None);
            cancel.Cancel();
            Assert.False(await abandoned.WaitAsync(Guard));

            limit.Release();
            Assert.True(await live.WaitAsync(Guard), "the permit went to the canceled waiter");
            Assert.Equal(1, limit.InFlight);
            limit.Release();
            Assert.Equal(0, limit.InFlight);
        }
        finally
        {
            await DisposeAsync(limit);
        }
    }

    [Fact]
    public async Task RacingAcquiresAndReleases_NeverHoldMoreThanCurrent()
    {
        if (!HasCap)
        {
            return;
        }

        const int Capacity = 3;
        var limit = await CreateAsync(Capacity);
        try
        {
            var held = 0;
            var peak = 0;
            var granted = 0;
            async Task Hammer(int seed)
            {
                var random = new Random(seed);
                for (var i = 0; i < 150; i++)
                {
                    using var cancel = new CancellationTokenSource();
                    if (random.Next(8) == 0)
                    {
                        cancel.CancelAfter(random.Next(3)); // some waits give up: they must take nothing with them
                    }

                    if (!limit.TryAcquire() && !await limit.WaitAsync(cancel.Token))
                    {
                        continue;
                    }

                    Interlocked.Increment(ref granted);
                    InterlockedMax(ref peak, Interlocked.Increment(ref held));
                    if (random.Next(2) == 0)
                    {
                        await Task.Yield();
                    }

                    Interlocked.Decrement(ref held);
                    limit.Release();
                }
            }

            await Task.WhenAll(Enumerable.Range(0, 8).Select(seed => Task.Run(() => Hammer(seed)))).WaitAsync(Guard * 2);

            Assert.InRange(peak, 1, Capacity);
            Assert.True(granted > 8 * 150 / 2, $"only {granted} of {8 * 150} acquires were granted");
            Assert.Equal(0, limit.InFlight);
            Assert.True(await AcquireAsync(limit), "a permit leaked: the limit no longer grants");
            limit.Release();
        }
        finally
        {
            await DisposeAsync(limit);
        }
    }

    [Fact]
    public async Task FanOutAsync_OnTheLimit_StaysWithinItAndReturnsResultsInOrder()
    {
        const int Capacity = 4;
        var limit = await CreateAsync(Capacity);
        try
        {
            var running = 0;
            var peak = 0;
            var results = await Enumerable.Range(0, 120).FanOutAsync(
                async (item, ct) =>
                {
                    InterlockedMax(ref peak, Interlocked.Increment(ref running));
                    await Task.Delay(1, ct);
                    Interlocked.Decrement(ref running);
                    return item * 2;
                },
                new FanOutOptions { Limit = limit }).WaitAsync(Guard);

            Assert.Equal(Enumerable.Range(0, 120).Select(i => i * 2), results);
            Assert.InRange(peak, 1, HasCap ? Capacity : 120);
            Assert.Equal(0, limit.InFlight);
        }
        finally
        {
            await DisposeAsync(limit);
        }
    }

    [Fact]
    public async Task TwoCallsSharingTheLimit_StayWithinItTogether()
    {
        const int Capacity = 3;
        var limit = await CreateAsync(Capacity);
        try
        {
            var running = 0;
            var peak = 0;
            async ValueTask Body(int item, CancellationToken ct)
            {
                InterlockedMax(ref peak, Interlocked.Increment(ref running));
                await Task.Delay(1, ct);
                Interlocked.Decrement(ref running);
            }

            var options = new FanOutOptions { Limit = limit };
            await Task.WhenAll(
                Enumerable.Range(0, 60).FanOutAsync(Body, options),
                Enumerable.Range(0, 60).ToAsyncEnumerable().FanOutAsync(Body, options)).WaitAsync(Guard);

            Assert.InRange(peak, 1, HasCap ? Capacity : 120);
            Assert.Equal(0, limit.InFlight);
        }
        finally
        {
            await DisposeAsync(limit);
        }
    }

    [Fact]
    public async Task RecordStartAndCompletion_EveryOutcome_KeepsTheLimitGranting()
    {
        var limit = await CreateAsync(2);
        try
        {
            foreach (var outcome in Enum.GetValues<ItemOutcome>())
            {
                Assert.True(await AcquireAsync(limit), $"no permit after an attempt that ended {outcome}");
                var start = limit.RecordStart();
                limit.RecordCompletion(start, outcome);
                limit.Release();
            }

            Assert.Equal(0, limit.InFlight);
            Assert.True(limit.Current >= 1);
            Assert.False(limit.IsOverload(new InvalidOperationException("not an overload")));
        }
        finally
        {
            await DisposeAsync(limit);
        }
    }

    /// <summary>Takes a permit as a run does: without waiting if it can, else by waiting (guarded).</summary>
    protected static async Task<bool> AcquireAsync(ConcurrencyLimit limit) =>
        limit.TryAcquire() || await limit.WaitAsync(CancellationToken.None).WaitAsync(Guard);

    /// <summary>Waits for a permit for a short while; true if one was granted (then it is held).</summary>
    private static async Task<bool> WaitBrieflyAsync(ConcurrencyLimit limit)
    {
        using var cancel = new CancellationTokenSource(s_notGranted);
        return await limit.WaitAsync(cancel.Token).WaitAsync(Guard);
    }

    private static void InterlockedMax(ref int target, int value)
    {
        var seen = Volatile.Read(ref target);
        while (value > seen)
        {
            var previous = Interlocked.CompareExchange(ref target, value, seen);
            if (previous == seen)
            {
                return;
            }

            seen = previous;
        }
    }
}
