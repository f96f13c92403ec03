using System.Diagnostics;

namespace FanOut.Execution;

/// <summary>
/// One fan-out call's share of its limit, and the only writer of its workers' part in it: the permits they hold, the
/// workers on their way to one, the call's one waiter, its places in a rate limiter's queue, the active workers and the
/// end of the items. Every transition is one method that takes the worker, asserts the state it starts from, and changes
/// the worker's <see cref="WorkerHold"/> and the call's count together. The permit protocol's rules live here, once; the
/// worker loop (<c>FanOutRun.Permits.cs</c>) only orders the steps.
/// </summary>
/// <remarks>
/// <para>The rules (docs/library.md, "The permit protocol"):</para>
/// <list type="number">
/// <item>Nobody waits, for anything, while holding a permit of the pool: a worker gives its permit back before it waits for
/// a consumer, a rate-limiter lease, an ordered window's slot, its turn at a lazy source or a Retry-After delay. The one
/// permit held across waits is a permit borrowed from an enclosing item of the same limit (<see cref="TryBorrow"/>), which
/// is not the pool's to give to anyone else.</item>
/// <item>Room is reserved with one atomic step: the seekers count every worker between "decided to look" and
/// "holds a permit or gave up" (started and not yet running, looking, queued for a lease), and a new worker is started only
/// by a compare-and-swap that keeps it below the room the limit shows (<see cref="TryReserveSeeker"/>). Seekers, lease-queue
/// places and the waiter share one 64-bit word, so a worker moves between them in one atomic step and every step checks
/// how they relate (<see cref="AssertInvariants"/>). A stale look at the
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
    // The places word: seekers in bits 0-31, lease-queue places in bits 32-61, the waiter in bit 62.
    private const long OneSeeker = 1;
    private const long OneLeasePlace = 1L << 32;
    private const long WaiterBit = 1L << 62;

    private readonly ConcurrencyLimit _limit;
    private readonly CancellationToken _runToken;

    /// <summary>Seekers (rule 2), places in the lease queue (rule 3) and the call's one waiter (rule 4), in one word.</summary>
    private long _places;

    /// <summary>Permits of the pool this call's workers hold right now (a borrowed permit is not one).</summary>
    private int _held;

    /// <summary>Workers started and not yet stopped (a retired worker is counted out as it retires); the one that brings it to 0 completes the call.</summary>
    private long _activeWorkers;

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

    /// <summary>Workers of the call on their way to a permit.</summary>
    internal int Seeking => SeekersOf(Volatile.Read(ref _places));

    /// <summary>Workers of the call queued for a lease.</summary>
    internal int LeaseQueued => LeaseQueuedOf(Volatile.Read(ref _places));

    /// <summary>Workers started and not yet stopped or retired.</summary>
    public long ActiveWorkers => Volatile.Read(ref _activeWorkers);

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

    /// <summary>
    /// Whether a worker that found no room should stay (as the call's waiter) rather than retire: room may come from outside
    /// the call (another call, a lease, code holding permits itself, another process) or from a limit that rises with nothing
    /// completing (rule 4).
    /// </summary>
    public bool RoomMayComeFromOutside => _limit.MayRiseUnprompted || Volatile.Read(ref _held) < _limit.Current;

    // ---- Workers: started on a reservation, retired, stopped.

    /// <summary>Counts the call's first worker, active and seeking; the caller queues it and hands it to <see cref="AdoptReserved"/>.</summary>
    public void ReserveFirstWorker()
    {
        Debug.Assert(Volatile.Read(ref _activeWorkers) == 0 && Volatile.Read(ref _places) == 0, "the call started twice");
        Volatile.Write(ref _activeWorkers, 1);
        AddPlaces(OneSeeker);
    }

    /// <summary>A new worker takes over the seeker's place reserved for it.</summary>
    public static void AdoptReserved(PermitHolder worker)
    {
        Expect(worker, WorkerHold.None);
        worker.Hold = WorkerHold.Seeking;
    }

    /// <summary>Reserves the room for one more worker, or fails when the workers already on their way cover the room.</summary>
    public bool TryReserveSeeker()
    {
        // One look at the limit, then one compare-and-swap on the call's own word (rule 2).
        var room = _limit.Current - _limit.InFlight;
        var seen = Volatile.Read(ref _places);
        while (SeekersOf(seen) < room)
        {
            var previous = Interlocked.CompareExchange(ref _places, seen + OneSeeker, seen);
            if (previous == seen)
            {
                AssertPlaces(seen + OneSeeker);
                return true;
            }

            seen = previous;
        }

        return false;
    }

    /// <summary>Reserves the one worker that waits for a limit that may rise unprompted, when no worker of the call is on its way to a permit.</summary>
    public bool TryReserveRiseWatcher() => Interlocked.CompareExchange(ref _places, OneSeeker, 0) == 0;

    /// <summary>
    /// Counts up to <paramref name="count"/> reserved workers among the active ones, within <paramref name="maxWorkers"/>,
    /// and gives back the reservations the cap refuses; returns how many the caller starts.
    /// </summary>
    public int StartReserved(int count, long maxWorkers)
    {
        // Counted before they are queued: the call cannot complete between the check and the start (the starting worker
        // itself is counted, so the count is at least 1 here).
        var seen = Volatile.Read(ref _activeWorkers);
        var starting = (int)Math.Max(0, Math.Min(count, maxWorkers - seen));
        while (starting > 0)
        {
            var previous = Interlocked.CompareExchange(ref _activeWorkers, seen + starting, seen);
            if (previous == seen)
            {
                break;
            }

            seen = previous;
            starting = (int)Math.Max(0, Math.Min(count, maxWorkers - seen));
        }

        if (starting < count)
        {
            AddPlaces(-(count - starting) * OneSeeker); // refused by the cap: the room stays unreserved
        }

        return starting;
    }

    /// <summary>
    /// Counts a worker that holds nothing out of the call's active workers, unless it is the last one (one compare-and-swap,
    /// so two workers that find no room at once cannot both leave the call without a worker). False: this is the last worker.
    /// </summary>
    public bool TryRetire(PermitHolder worker)
    {
        // A worker holding the borrowed permit may retire too: it gives it back to the enclosing item as it stops.
        Debug.Assert((worker.Hold & ~WorkerHold.BorrowedPermit) == WorkerHold.None, $"a worker retired in state {worker.Hold}");
        var active = Volatile.Read(ref _activeWorkers);
        while (active > 1)
        {
            var seen = Interlocked.CompareExchange(ref _activeWorkers, active - 1, active);
            if (seen == active)
            {
                worker.Hold |= WorkerHold.Retired;
                return true;
            }

            active = seen;
        }

        return false;
    }

    /// <summary>Asserts a stopping worker gave back everything it held (its <c>finally</c> did, whatever threw).</summary>
    [Conditional("DEBUG")]
    public static void AssertStopping(PermitHolder worker) =>
        Debug.Assert(worker.Hold is WorkerHold.None or WorkerHold.Retired, $"a worker stopped in state {worker.Hold}");

    /// <summary>
    /// Counts a stopping worker out of the active ones (never asserts: the call must complete whatever went wrong); true when
    /// it was the last, which completes the call.
    /// </summary>
    public bool Stop(PermitHolder worker)
    {
        if ((worker.Hold & WorkerHold.Retired) != 0)
        {
            return false; // counted out as it retired, while another worker was still active
        }

        return Interlocked.Decrement(ref _activeWorkers) == 0;
    }

    // ---- Seeking: on the way to a permit.

    /// <summary>Counts a worker that holds no permit of the pool among the seekers, unless it is one already (a first look, or a look after a wait).</summary>
    public void EnsureSeeking(PermitHolder worker)
    {
        AssertLegal(worker);
        Debug.Assert(!worker.HoldsPoolPermit, "a worker that holds a permit of the pool looked for another");
        if ((worker.Hold & WorkerHold.Seeking) == 0)
        {
            worker.Hold |= WorkerHold.Seeking;
            AddPlaces(OneSeeker);
        }
    }

    /// <summary>Gives a worker's permit of the pool back and counts it among the seekers in one step: it takes one again after its wait.</summary>
    public void ReturnToSeek(PermitHolder worker)
    {
        Expect(worker, WorkerHold.PoolPermit);
        worker.Hold = WorkerHold.Seeking;
        AddPlaces(OneSeeker); // first: nobody is started for the room it gives back
        ReleaseHeld();
    }

    /// <summary>Before a wait: a worker holding a permit of the pool gives it back and seeks (<see cref="ReturnToSeek"/>); the borrowed permit stays, as rule 1 allows.</summary>
    public void ReturnToSeekIfHeld(PermitHolder worker)
    {
        if (worker.HoldsPoolPermit)
        {
            ReturnToSeek(worker);
        }
    }

    /// <summary>A worker that holds a permit (its own or borrowed) is no longer on its way to one.</summary>
    public void Arrived(PermitHolder worker)
    {
        AssertLegal(worker);
        Debug.Assert(worker.HoldsAnyPermit, "a worker arrived without a permit");
        LeaveSeeking(worker);
    }

    /// <summary>Counts a worker that gave up out of the seekers, if it is one; its waits (the waiter's, a lease place) are over.</summary>
    public void LeaveSeeking(PermitHolder worker)
    {
        Debug.Assert((worker.Hold & (WorkerHold.Waiter | WorkerHold.LeaseQueued)) == 0, $"a worker left seeking while it waits ({worker.Hold})");
        if ((worker.Hold & WorkerHold.Seeking) != 0)
        {
            worker.Hold &= ~WorkerHold.Seeking;
            AddPlaces(-OneSeeker);
        }
    }

    // ---- Permits of the pool, and the borrowed one.

    /// <summary>Takes a permit of the pool without waiting, for a worker that holds none.</summary>
    public bool TryTake(PermitHolder worker)
    {
        ExpectLooking(worker);
        if (!_limit.TryAcquire())
        {
            return false;
        }

        Took(worker);
        return true;
    }

    /// <summary>
    /// Waits at the limit for a worker that must not retire (it holds an item, or the turn to pull one), not as the call's
    /// waiter; false when <paramref name="cancellationToken"/> was canceled first.
    /// </summary>
    public async ValueTask<bool> WaitForPermitAsync(PermitHolder worker, CancellationToken cancellationToken)
    {
        ExpectLooking(worker);
        if (!await _limit.WaitAsync(cancellationToken).ConfigureAwait(false))
        {
            return false;
        }

        Took(worker);
        return true;
    }

    /// <summary>Makes a seeking worker the call's one waiter; false when another worker of the call already waits.</summary>
    public bool TryBecomeWaiter(PermitHolder worker)
    {
        Expect(worker, WorkerHold.Seeking);
        var seen = Volatile.Read(ref _places);
        while ((seen & WaiterBit) == 0)
        {
            var previous = Interlocked.CompareExchange(ref _places, seen | WaiterBit, seen);
            if (previous == seen)
            {
                AssertPlaces(seen | WaiterBit);
                worker.Hold = WorkerHold.Seeking | WorkerHold.Waiter;
                return true;
            }

            seen = previous;
        }

        return false;
    }

    /// <summary>Waits at the limit as the call's one waiter; true with a permit taken, false when the run stopped or the items ran out first.</summary>
    public async ValueTask<bool> WaitAsWaiterAsync(PermitHolder worker)
    {
        Expect(worker, WorkerHold.Seeking | WorkerHold.Waiter);
        var granted = false;
        try
        {
            granted = !IsExhausted && await _limit.WaitAsync(WaitToken).ConfigureAwait(false);
        }
        finally
        {
            // The waiter's bit goes before its seeker's place (a waiter is always a seeker), whatever the limit threw.
            worker.Hold = WorkerHold.Seeking;
            AddPlaces(-WaiterBit);
        }

        if (granted)
        {
            Took(worker);
        }

        return granted;
    }

    /// <summary>Gives a worker's permit of the pool back.</summary>
    public void Give(PermitHolder worker)
    {
        Expect(worker, WorkerHold.PoolPermit);
        worker.Hold = WorkerHold.None;
        ReleaseHeld(); // last: the limit's Release is user code, and may throw with the worker's state already right
    }

    /// <summary>Gives a worker's permit of the pool back if it holds one (a step that may come with or without one: giving up, a wait).</summary>
    public void GiveIfHeld(PermitHolder worker)
    {
        if (worker.HoldsPoolPermit)
        {
            Give(worker);
        }
    }

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
    public bool TryTakeBorrowed(PermitHolder worker)
    {
        ExpectLooking(worker);
        if (_borrowed is null || Interlocked.CompareExchange(ref _borrowedTaken, 1, 0) != 0)
        {
            return false;
        }

        Volatile.Write(ref _borrowedHeld, 1);
        LeaveSeeking(worker);
        worker.Hold |= WorkerHold.BorrowedPermit;
        return true;
    }

    /// <summary>Gives the borrowed permit back to the enclosing item, if the worker holds it (it stopped).</summary>
    public void ReturnBorrowedIfHeld(PermitHolder worker)
    {
        if ((worker.Hold & WorkerHold.BorrowedPermit) == 0)
        {
            return;
        }

        Debug.Assert(_borrowed is not null && Volatile.Read(ref _borrowedHeld) == 1, "the borrowed permit is held twice");
        worker.Hold &= ~WorkerHold.BorrowedPermit;
        Volatile.Write(ref _borrowedHeld, 0);
        AssertInvariants();
        _borrowed!.Return();
    }

    // ---- The rate limiter's queue (rule 3).

    /// <summary>Takes a place in the rate limiter's queue, one of at most <see cref="ConcurrencyLimit.Current"/>, counted among the seekers in the same step.</summary>
    public bool TryEnterLeaseQueue(PermitHolder worker)
    {
        AssertLegal(worker);
        Debug.Assert(!worker.HoldsPoolPermit && (worker.Hold & (WorkerHold.Waiter | WorkerHold.LeaseQueued)) == 0, $"a worker queued for a lease from {worker.Hold}");
        var step = OneLeasePlace + ((worker.Hold & WorkerHold.Seeking) == 0 ? OneSeeker : 0);
        var places = Math.Max(1, _limit.Current);
        var seen = Volatile.Read(ref _places);
        while (LeaseQueuedOf(seen) < places)
        {
            var previous = Interlocked.CompareExchange(ref _places, seen + step, seen);
            if (previous == seen)
            {
                AssertPlaces(seen + step);
                worker.Hold |= WorkerHold.Seeking | WorkerHold.LeaseQueued;
                return true;
            }

            seen = previous;
        }

        return false;
    }

    /// <summary>Leaves the rate limiter's queue; the worker still seeks until it holds a permit or gives up.</summary>
    public void LeaveLeaseQueue(PermitHolder worker)
    {
        AssertLegal(worker);
        Debug.Assert((worker.Hold & WorkerHold.LeaseQueued) != 0, $"a worker left a lease queue it was not in ({worker.Hold})");
        worker.Hold &= ~WorkerHold.LeaseQueued;
        AddPlaces(-OneLeasePlace);
    }

    // ---- The end.

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

    /// <summary>
    /// How the call's counts relate, checked from one read of each (the places word is one read, so its relation holds at
    /// every instant, not only at rest): a waiter and the queued workers are seekers; nothing is negative; the borrowed
    /// permit is held only after it was taken. Every transition runs it in Debug builds, and so do the systematic tests.
    /// </summary>
    [Conditional("DEBUG")]
    internal void AssertInvariants()
    {
        AssertPlaces(Volatile.Read(ref _places));
        Debug.Assert(Volatile.Read(ref _held) >= 0, "permits held went below 0");
        Debug.Assert(Volatile.Read(ref _activeWorkers) >= 0, "active workers went below 0");
        Debug.Assert(Volatile.Read(ref _borrowedHeld) <= Volatile.Read(ref _borrowedTaken), "the borrowed permit is held but was never taken");
    }

    private static int SeekersOf(long places) => (int)(places & 0xFFFF_FFFF);

    private static int LeaseQueuedOf(long places) => (int)((places >> 32) & 0x3FFF_FFFF);

    private static int WaitersOf(long places) => (places & WaiterBit) != 0 ? 1 : 0;

    /// <summary>Takes the permit the limit just gave: one more held, the worker holds it and no longer seeks.</summary>
    private void Took(PermitHolder worker)
    {
        Interlocked.Increment(ref _held);
        var seeking = (worker.Hold & WorkerHold.Seeking) != 0;
        worker.Hold = WorkerHold.PoolPermit;
        if (seeking)
        {
            AddPlaces(-OneSeeker);
        }

        AssertInvariants();
    }

    private void ReleaseHeld()
    {
        var held = Interlocked.Decrement(ref _held);
        Debug.Assert(held >= 0, "a permit was given back twice");
        AssertInvariants();
        _limit.Release();
    }

    private void AddPlaces(long step)
    {
        // Never inside the assertion's argument: a [Conditional] call is compiled out with its arguments in Release.
        var places = Interlocked.Add(ref _places, step);
        AssertPlaces(places);
        AssertInvariants();
    }

    [Conditional("DEBUG")]
    private static void AssertPlaces(long places)
    {
        // A negative count borrows from the field above it, so each must read in range and the relation must hold.
        Debug.Assert(
            places >= 0 && SeekersOf(places) >= 0 && LeaseQueuedOf(places) + WaitersOf(places) <= SeekersOf(places),
            $"seekers {SeekersOf(places)}, lease places {LeaseQueuedOf(places)}, waiter {WaitersOf(places)}: a waiter and every queued worker must be seekers");
    }

    /// <summary>Asserts a worker's state is exactly <paramref name="expected"/> as a transition starts.</summary>
    [Conditional("DEBUG")]
    private static void Expect(PermitHolder worker, WorkerHold expected) =>
        Debug.Assert(worker.Hold == expected, $"a worker in state {worker.Hold} took a step that starts from {expected}");

    /// <summary>Asserts a worker may look for a permit: it holds none and waits for nothing else.</summary>
    [Conditional("DEBUG")]
    private static void ExpectLooking(PermitHolder worker)
    {
        AssertLegal(worker);
        Debug.Assert((worker.Hold & ~WorkerHold.Seeking) == 0, $"a worker in state {worker.Hold} looked for a permit");
    }

    /// <summary>Asserts a worker's state is one of the legal combinations.</summary>
    [Conditional("DEBUG")]
    private static void AssertLegal(PermitHolder worker)
    {
        var hold = worker.Hold;
        var seeking = (hold & WorkerHold.Seeking) != 0;
        Debug.Assert(
            (hold & ~WorkerHold.BorrowedPermit) == WorkerHold.Retired
            || ((hold & WorkerHold.Retired) == 0
                && ((hold & (WorkerHold.Waiter | WorkerHold.LeaseQueued)) == 0 || seeking)
                && (hold & (WorkerHold.Waiter | WorkerHold.LeaseQueued)) != (WorkerHold.Waiter | WorkerHold.LeaseQueued)
                && ((hold & WorkerHold.Waiter) == 0 || (hold & WorkerHold.BorrowedPermit) == 0)
                && ((hold & WorkerHold.PoolPermit) == 0 || hold == WorkerHold.PoolPermit)),
            $"a worker is in the illegal state {hold}");
    }

    [Conditional("DEBUG")]
    private void AssertSettled()
    {
        AssertInvariants();
        Debug.Assert(Volatile.Read(ref _held) == 0, $"{_held} permits still held when the call completed");
        Debug.Assert(Volatile.Read(ref _places) == 0, $"seekers {Seeking}, lease places {LeaseQueued} or a waiter left when the call completed");
        Debug.Assert(Volatile.Read(ref _activeWorkers) == 0, $"{_activeWorkers} workers still active when the call completed");
    }
}
