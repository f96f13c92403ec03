using System.Runtime.CompilerServices;

using FanOut.Redis.Tests.Infrastructure;

namespace FanOut.Redis.Tests.Limits;

/// <summary>
/// A waiter granted while it registers on its token leaves no registration behind. A registration left on the token keeps
/// its waiter reachable from the token's source, so the tests count the waiters the garbage collector cannot reclaim while
/// the source lives (no reflection into <see cref="CancellationTokenSource"/>).
/// </summary>
public sealed class LeaseWaiterTests(RedisServer redis) : IClassFixture<RedisServer>
{
    [Fact]
    public void Register_AfterGrant_LeavesNoRegistrationOnTheToken()
    {
        using var cancel = new CancellationTokenSource();
        var limit = RedisConcurrencyLimit.Create(redis.Connection, new RedisLimitOptions { Key = $"test-{Guid.NewGuid():N}", Budget = 1 });
        var waiters = MakeWaiters(limit, 100, waiter =>
        {
            // The interleaving of the race: another thread's Drain grants the waiter before WaitAsync registers it.
            waiter.Grant();
            waiter.Register(cancel.Token);
        });

        Assert.Equal(0, LiveCount(waiters));
        GC.KeepAlive(cancel);
    }

    [Fact]
    public void Register_AfterFail_LeavesNoRegistrationOnTheToken()
    {
        using var cancel = new CancellationTokenSource();
        var limit = RedisConcurrencyLimit.Create(redis.Connection, new RedisLimitOptions { Key = $"test-{Guid.NewGuid():N}", Budget = 1 });
        var waiters = MakeWaiters(limit, 100, waiter =>
        {
            waiter.Fail(new InvalidOperationException("failed before it registered"));
            waiter.Register(cancel.Token);
        });

        Assert.Equal(0, LiveCount(waiters));
        GC.KeepAlive(cancel);
    }

    [Fact]
    public async Task RegisterAndGrant_RacingOnManyWaiters_LeaveNoRegistrationOnTheToken()
    {
        // Both orders, and everything in between, on two threads at once: the count must be zero, not merely small.
        const int Waiters = 20_000;
        using var cancel = new CancellationTokenSource();
        var limit = RedisConcurrencyLimit.Create(redis.Connection, new RedisLimitOptions { Key = $"test-{Guid.NewGuid():N}", Budget = 1 });
        var waiters = await RaceAsync(limit, Waiters, cancel.Token);

        Assert.Equal(0, LiveCount(waiters));
        GC.KeepAlive(cancel);
    }

    [Fact]
    public async Task Cancel_WaiterNotGranted_StillCompletesFalse()
    {
        // The fix must not cost cancellation: a registered, ungranted waiter is removed and completes with false.
        using var cancel = new CancellationTokenSource();
        await using var holder = RedisConcurrencyLimit.Create(redis.Connection, new RedisLimitOptions { Key = await redis.FreshKeyAsync("test"), Budget = 1 });
        Assert.True(await holder.WaitAsync(CancellationToken.None).WaitAsync(TimeSpan.FromSeconds(20)));
        var waiting = holder.WaitAsync(cancel.Token);

        await cancel.CancelAsync();

        Assert.False(await waiting.WaitAsync(TimeSpan.FromSeconds(20)));
        holder.Release();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static WeakReference[] MakeWaiters(RedisConcurrencyLimit limit, int count, Action<LeaseWaiter> act)
    {
        var weak = new WeakReference[count];
        for (var i = 0; i < count; i++)
        {
            var waiter = new LeaseWaiter(limit, 0);
            act(waiter);
            weak[i] = new WeakReference(waiter);
        }

        return weak;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static async Task<WeakReference[]> RaceAsync(RedisConcurrencyLimit limit, int count, CancellationToken token)
    {
        var weak = new WeakReference[count];
        var waiters = new LeaseWaiter[count];
        for (var i = 0; i < count; i++)
        {
            waiters[i] = new LeaseWaiter(limit, 0);
            weak[i] = new WeakReference(waiters[i]);
        }

        // Two threads walk the same waiters, one registering and one granting; a spin barrier per waiter lines them up.
        var turn = new int[count];
        void Walk(bool register)
        {
            for (var i = 0; i < count; i++)
            {
                Interlocked.Increment(ref turn[i]);
                var spin = new SpinWait();
                while (Volatile.Read(ref turn[i]) < 2 && !spin.NextSpinWillYield)
                {
                    spin.SpinOnce();
                }

                if (register)
                {
                    waiters[i].Register(token);
                }
                else
                {
                    waiters[i].Grant();
                }
            }
        }

        await Task.WhenAll(Task.Run(() => Walk(register: true)), Task.Run(() => Walk(register: false)));
        Array.Clear(waiters);
        return weak;
    }

    /// <summary>Waiters still reachable after a full collection: only a registration left on a live token keeps one alive.</summary>
    private static int LiveCount(WeakReference[] waiters)
    {
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        return waiters.Count(w => w.IsAlive);
    }
}
