using System.Diagnostics;

namespace FanOut.Execution;

/// <summary>
/// One fan-out call's share of its limit: the permits its workers hold, the workers on their way to one, the call's one
/// waiter, its places in a rate limiter's queue, and the end of its items. The permit protocol's rules live here, once;
/// the worker loop (<c>FanOutRun.Permits.cs</c>) follows them and owns what it takes (its <see cref="Sources.WorkerSlot{T}"/>).
/// </summary>
/// <remarks>
/// <para>The rules (docs/library.md, "The permit protocol"):</para>
/// <list type="number">
/// <item>Nobody waits, for anything, while holding a permit of the pool: a worker gives its permit back before it waits for
/// a consumer, a rate-limiter lease, an ordered window's slot, its turn at a lazy source or a Retry-After delay. The one
/// permit held across waits is a permit borrowed from an enclosing item of the same limit (<see cref="TryBorrow"/>), which
/// is not the pool's to give to anyone else.</item>
/// <item>Room is reserved with one atomic step: <see cref="_seeking"/> counts every worker between "decided to look" and
/// "holds a permit or gave up" (started and not yet running, looking, queued for a lease), and a new worker is started only
/// by a compare-and-swap that keeps it below the room the limit shows (<see cref="TryReserveSeeker"/>). A stale look at the
/// limit costs at most a worker that finds no room and retires; it can never put a body over the limit, which only the
/// limit's own atomic take decides.</item>
/// <item>Workers queued at a rate limiter never outnumber the limit: a place in that queue is taken with one atomic
/// increment checked against <see cref="ConcurrencyLimit.Current"/> (<see cref="TryEnterLeaseQueue"/>).</item>
/// <item>A worker that finds no room retires when the call's own permits cover the limit and it cannot rise unprompted
/// (room then comes back only to the call's own workers, which run the next items themselves); otherwise one worker of the
/// call waits at the limit (<see cref="TryBecomeWaiter"/>). The call's last worker never retires: it waits.</item>
/// <item>A call completes when its items are settled, not when a permit comes: a known-count source is checked before
/// waiting, and the worker that finds the end of any source cancels the call's pending waits (<see cref="MarkExhausted"/>).</item>
/// </list>
/// </remarks>
internal sealed class CallPermits
{
    private readonly ConcurrencyLimit _limit;
    private readonly CancellationToken _runToken;

    /// <summary>Permits of the pool this call's workers hold right now (a borrowed permit is not one).</summary>
    private int _held;

    /// <summary>Workers between "decided to look for a permit" and "hold one or gave up" (see rule 2).</summary>
    private int _seeking;

    /// <summary>1 while a worker of the call waits at the limit as its one waiter.</summary>
    private int _waiter;

    /// <summary>Workers queued at the rate limiter for a lease (see rule 3).</summary>
    private int _leaseQueued;

    /// <summary>1 once a worker found the end of the items (see rule 5).</summary>
    private int _exhausted;

    /// <summary>Canceled by the run's stop or the end of the items: every wait of the protocol ends with it. Made on the first wait.</summary>
    private CancellationTokenSource? _waits;

    /// <summary>The enclosing call whose permit this call borrowed (a nested call on the same limit), until the call completes.</summary>
    private CallScope? _borrowed;

    /// <summary>1 once a worker of the call took the borrowed permit (or the call completed without one taking it).</summary>
    private int _borrowedTaken;

    /// <summary>1 while a worker of the call holds the borrowed permit.</summary>
    private int _borrowedHeld;

    public CallPermits(ConcurrencyLimit limit, CancellationToken runToken)
    {
        _limit = limit;
        _runToken = runToken;
    }

    /// <summary>True once the end of the items was found: nothing is left to take a permit for.</summary>
    public bool IsExhausted => Volatile.Read(ref _exhausted) != 0;

    /// <summary>Workers of the call on their way to a permit (for tests).</summary>
    internal int Seeking => Volatile.Read(ref _seeking);

    /// <summary>Workers of the call queued for a lease (for tests).</summary>
    internal int LeaseQueued => Volatile.Read(ref _leaseQueued);

    /// <summary>The token every wait of the protocol takes: canceled when the run stops or its items are all taken.</summary>
    public CancellationToken WaitToken
    {
        get
        {
            var waits = Volatile.Read(ref _waits);
            if (waits is null)
            {
                var created = CancellationTokenSource.CreateLinkedTokenSource(_runToken);
                waits = Interlocked.CompareExchange(ref _waits, created, null) ?? created;
                if (!ReferenceEquals(waits, created))
                {
                    created.Dispose();
                }

                // Made after the end was found: MarkExhausted saw no source to cancel, so cancel it here.
                if (IsExhausted)
                {
                    waits.Cancel();
                }
            }

            return waits.Token;
        }
    }

    /// <summary>True while a worker of the call holds a permit, its own or borrowed: nested use of the limit may reuse it.</summary>
    public bool HoldsAny => Volatile.Read(ref _held) > 0 || Volatile.Read(ref _borrowedHeld) != 0;

    /// <summary>Takes a permit of the enclosing call on the same limit for this call, if the calling flow runs in such a call.</summary>
    public bool TryBorrow()
    {
        if (CallScope.Current is { } scope && scope.TryLend(_limit))
        {
            _borrowed = scope;
            return true;
        }

        return false;
    }

    /// <summary>Gives the borrowed permit to the worker asking, once: the call's first worker runs on it.</summary>
    public bool TryTakeBorrowed()
    {
        if (_borrowed is null || Interlocked.CompareExchange(ref _borrowedTaken, 1, 0) != 0)
        {
            return false;
        }

        Volatile.Write(ref _borrowedHeld, 1);
        return true;
    }

    /// <summary>Gives the borrowed permit back to the enclosing item (the worker holding it stopped).</summary>
    public void ReturnBorrowed()
    {
        Debug.Assert(_borrowed is not null && Volatile.Read(ref _borrowedHeld) == 1);
        Volatile.Write(ref _borrowedHeld, 0);
        _borrowed!.Return();
    }

    /// <summary>Counts a worker that will look for a permit without a reservation (the first one, or one that gave its permit back).</summary>
    public void EnterSeeking() => Interlocked.Increment(ref _seeking);

    /// <summary>Counts a worker out of <see cref="_seeking"/>: it holds a permit now, or gave up.</summary>
    public void LeaveSeeking()
    {
        var seeking = Interlocked.Decrement(ref _seeking);
        Debug.Assert(seeking >= 0, "a worker left seeking twice");
    }

    /// <summary>Reserves the room for one more worker, or fails when the workers already on their way cover the room.</summary>
    public bool TryReserveSeeker()
    {
        // One look at the limit, then one compare-and-swap on the call's own count (rule 2).
        var room = _limit.Current - _limit.InFlight;
        var seen = Volatile.Read(ref _seeking);
        while (seen < room)
        {
            var previous = Interlocked.CompareExchange(ref _seeking, seen + 1, seen);
            if (previous == seen)
            {
                return true;
            }

            seen = previous;
        }

        return false;
    }

    /// <summary>Takes a permit of the pool without waiting.</summary>
    public bool TryTake()
    {
        if (!_limit.TryAcquire())
        {
            return false;
        }

        Interlocked.Increment(ref _held);
        return true;
    }

    /// <summary>Counts a permit a worker of the call took by waiting at the limit itself (not as the call's waiter).</summary>
    public void CountTaken() => Interlocked.Increment(ref _held);

    /// <summary>Reserves the one worker that waits for a limit that may rise unprompted, when no worker of the call is on its way to a permit.</summary>
    public bool TryReserveRiseWatcher() => Interlocked.CompareExchange(ref _seeking, 1, 0) == 0;

    /// <summary>Gives a permit of the pool back.</summary>
    public void Give()
    {
        var held = Interlocked.Decrement(ref _held);
        Debug.Assert(held >= 0, "a permit was given back twice");
        _limit.Release();
    }

    /// <summary>
    /// Whether a worker that found no room should stay (as the call's waiter) rather than retire: room may come from outside
    /// the call (another call, a lease, code holding permits itself, another process) or from a limit that rises with nothing
    /// completing (rule 4).
    /// </summary>
    public bool RoomMayComeFromOutside => _limit.MayRiseUnprompted || Volatile.Read(ref _held) < _limit.Current;

    /// <summary>Makes the calling worker the call's one waiter; false when another worker of the call already waits.</summary>
    public bool TryBecomeWaiter() => Interlocked.CompareExchange(ref _waiter, 1, 0) == 0;

    /// <summary>Waits at the limit as the call's one waiter; true with a permit taken, false when the run stopped or the items ran out first.</summary>
    public async ValueTask<bool> WaitAsWaiterAsync()
    {
        Debug.Assert(Volatile.Read(ref _waiter) == 1);
        try
        {
            if (IsExhausted || !await _limit.WaitAsync(WaitToken).ConfigureAwait(false))
            {
                return false;
            }

            Interlocked.Increment(ref _held);
            return true;
        }
        finally
        {
            Volatile.Write(ref _waiter, 0);
        }
    }

    /// <summary>Takes a place in the rate limiter's queue, one of at most <see cref="ConcurrencyLimit.Current"/> (rule 3).</summary>
    public bool TryEnterLeaseQueue()
    {
        if (Interlocked.Increment(ref _leaseQueued) <= Math.Max(1, _limit.Current))
        {
            return true;
        }

        Interlocked.Decrement(ref _leaseQueued);
        return false;
    }

    /// <summary>Leaves the rate limiter's queue.</summary>
    public void LeaveLeaseQueue() => Interlocked.Decrement(ref _leaseQueued);

    /// <summary>Says the items are all taken: every pending wait of the call ends (rule 5).</summary>
    public void MarkExhausted()
    {
        if (Interlocked.Exchange(ref _exhausted, 1) == 0 && Volatile.Read(ref _waits) is { } waits)
        {
            // Outside every lock; the callbacks are the limit's waiter removals, which take its lock only.
            waits.Cancel();
        }
    }

    /// <summary>Called once every worker stopped: nothing is held, nothing waits.</summary>
    public void Complete()
    {
        AssertSettled();
        if (_borrowed is not null && Interlocked.CompareExchange(ref _borrowedTaken, 1, 0) == 0)
        {
            _borrowed.Return(); // stopped before any worker ran on it: the enclosing item has it back all the same
        }

        _waits?.Dispose();
    }

    [Conditional("DEBUG")]
    private void AssertSettled()
    {
        Debug.Assert(Volatile.Read(ref _held) == 0, $"{_held} permits still held when the call completed");
        Debug.Assert(Volatile.Read(ref _seeking) == 0, $"{_seeking} workers still seeking when the call completed");
        Debug.Assert(Volatile.Read(ref _leaseQueued) == 0, $"{_leaseQueued} workers still queued for leases when the call completed");
        Debug.Assert(Volatile.Read(ref _waiter) == 0, "a waiter left when the call completed");
    }
}
