using System.Runtime.CompilerServices;
using System.Threading.RateLimiting;

using FanOut.Sources;

namespace FanOut.Execution;

/// <summary>The worker's side of the permit protocol: in which order it takes its window slot, lease, permit and item.</summary>
/// <remarks>
/// <para>
/// The rules are <see cref="CallPermits"/>'s, stated once there and in docs/library.md. Here the order: an ordered stream's
/// window slot, then the rate limiter's lease, then the permit, then the item. Every wait in that order holds no permit of
/// the pool: a worker that would wait gives its permit back first. An item is pulled only when a body can start on it: with
/// every body blocked at a limit of D, exactly D items have been pulled, as with Parallel.ForEachAsync.
/// </para>
/// <para>
/// The worker's <see cref="WorkerSlot{T}"/> owns what it holds (permit, borrowed permit, lease, window slot, its place among
/// the seekers and in the lease queue), each recorded the instant it is taken, and the worker's <c>finally</c> gives back
/// whatever is still held, whatever threw: a rate limiter, a limit's hook, an activity listener, a metrics listener.
/// </para>
/// </remarks>
internal abstract partial class FanOutRun<T>
{
    /// <summary>What a look for a permit came to.</summary>
    private enum PermitLook
    {
        /// <summary>The worker holds a permit.</summary>
        Taken,

        /// <summary>The worker gave up (stopped, no items left) or retired: it holds nothing and stops.</summary>
        GaveUp,

        /// <summary>The worker let go of its window slot or lease to retire, but was the call's last worker: it takes its turn again.</summary>
        Again,

        /// <summary>The worker meant to retire but is the call's last worker, and gave back nothing it must take again: it goes on looking.</summary>
        Stayed,
    }

    /// <summary>A lazy source's turns: one worker of the call pulls (and takes its permit) at a time. Null for arrays and lists.</summary>
    private readonly SemaphoreSlim? _claimTurn;

    /// <summary>
    /// Takes the window slot, lease, permit and item for the worker's next item: true with all of them held (recorded on the
    /// slot); false when the source is exhausted or failed, the run stopped, or the worker retired, with everything given back.
    /// </summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<bool> TakeTurnAsync(WorkerSlot<T> slot)
    {
        while (true)
        {
            if (_hasWindow && !slot.InWindow)
            {
                var window = BeforeClaimAsync(Token);
                if (!window.IsCompleted && slot.HoldsPermit)
                {
                    GivePermit(slot); // an ordered stream's window is full: wait for the consumer without a permit,
                    EnterSeeking(slot); // counted as seeking, as a worker on its way back to a permit
                }

                if (!await window.ConfigureAwait(false))
                {
                    return GiveUp(slot);
                }

                slot.InWindow = true;
            }

            if (!_source.ClaimsSynchronously)
            {
                return await ClaimInTurnAsync(slot).ConfigureAwait(false);
            }

            if (_rateLimiter is not null && slot.Lease is null)
            {
                var leased = await TakeLeaseAsync(slot).ConfigureAwait(false);
                if (leased == PermitLook.Again)
                {
                    continue;
                }

                if (leased == PermitLook.GaveUp)
                {
                    return GiveUp(slot);
                }
            }

            if (!slot.HoldsAnyPermit)
            {
                var look = await TakePermitAsync(slot).ConfigureAwait(false);
                if (look == PermitLook.Again)
                {
                    continue;
                }

                if (look == PermitLook.GaveUp)
                {
                    return GiveUp(slot);
                }
            }

            LeaveSeeking(slot); // holds a permit (its own, or borrowed): no longer on its way to one
            if (!TryClaimInline(slot))
            {
                return GiveUp(slot);
            }

            slot.InWindow = false; // the slot is the item's now: the stream gives it back as the item is published or skipped
            return true;
        }
    }

    /// <summary>
    /// Looks for a permit for a worker that holds none (rule 4 of <see cref="CallPermits"/>): take one, or retire where only
    /// the call's own workers can make room, or wait as the call's one waiter. The call's last worker never retires.
    /// </summary>
    private async ValueTask<PermitLook> TakePermitAsync(WorkerSlot<T> slot)
    {
        EnterSeeking(slot);
        if (_permits.TryTakeBorrowed())
        {
            slot.HoldsBorrowed = true;
            LeaveSeeking(slot);
            return PermitLook.Taken;
        }

        while (true)
        {
            if (TryTakePermit(slot))
            {
                return PermitLook.Taken;
            }

            if (_stopped || NoItemsLeft)
            {
                return PermitLook.GaveUp;
            }

            if (!_permits.RoomMayComeFromOutside || !_permits.TryBecomeWaiter())
            {
                // Retire: room comes back to the call's own workers, or another worker of the call waits for it.
                var retired = RetireOrStay(slot);
                if (retired != PermitLook.Stayed)
                {
                    return retired;
                }

                if (!_permits.TryBecomeWaiter())
                {
                    await Task.Yield(); // the call's waiter is leaving as this last worker looks: look again
                    continue;
                }
            }

            var granted = await _permits.WaitAsWaiterAsync().ConfigureAwait(false);
            if (granted)
            {
                slot.HoldsPermit = true;
                LeaveSeeking(slot);
                return PermitLook.Taken;
            }

            return PermitLook.GaveUp;
        }
    }

    /// <summary>True when a known-count source has no item left to claim, or any source was found at its end.</summary>
    private bool NoItemsLeft => _permits.IsExhausted || (_source.KnownCount >= 0 && _source.ClaimedCount >= _source.KnownCount);

    /// <summary>
    /// Takes a lease of the rate limiter before the worker's next claim. A lease that would wait is waited for without a
    /// permit of the pool, in a place of the limiter's queue (at most the limit's worth); false, with nothing of it held,
    /// when the items left are already promised to queued workers, the queue is full, or the run stopped.
    /// </summary>
    private async ValueTask<PermitLook> TakeLeaseAsync(WorkerSlot<T> slot)
    {
        var lease = _rateLimiter!.AttemptAcquire(1); // may throw: the slot's permit, if any, goes back in the worker's finally
        if (lease.IsAcquired)
        {
            slot.Lease = lease;
            return PermitLook.Taken;
        }

        lease.Dispose();
        GivePermit(slot);

        // A lease is spent once granted, item or not: queue for one only while more items are left than workers already
        // queued, so the end of a run spends no tokens on workers that would find nothing.
        if (NoItemsLeft)
        {
            return PermitLook.GaveUp;
        }

        if (_source.KnownCount >= 0 && _source.KnownCount - _source.ClaimedCount <= _permits.LeaseQueued)
        {
            // The items left are promised to workers already queued: retire (the call's last worker queues all the same).
            var retired = RetireOrStay(slot);
            if (retired != PermitLook.Stayed)
            {
                return retired;
            }
        }

        while (!_permits.TryEnterLeaseQueue())
        {
            // As many of the call's workers queue as the limit has permits: this one retires. It cannot be the call's last
            // worker unless the queued ones just left, and then it looks again.
            var retired = RetireOrStay(slot);
            if (retired != PermitLook.Stayed)
            {
                return retired;
            }

            await Task.Yield();
        }

        EnterSeeking(slot); // the room it gave back is still its own until it holds a permit again: nobody starts a worker for it
        try
        {
            return await AcquireLeaseAsync(slot, _permits.WaitToken).ConfigureAwait(false) ? PermitLook.Taken : PermitLook.GaveUp;
        }
        finally
        {
            _permits.LeaveLeaseQueue();
        }
    }

    /// <summary>
    /// An async sequence: one worker of the call at a time takes its turn, and the others wait for theirs holding nothing.
    /// The worker in turn takes its permit, then pulls. If the pull waits (a quiet source) it gives the permit back while it
    /// waits and takes one again when the item comes. On a limit this call alone uses, exactly as many items are pulled as
    /// bodies can start; on a shared limit the worker in turn pulls before it has a permit and keeps the turn while it waits
    /// for one, so the call pulls at most one item ahead.
    /// </summary>
    private async ValueTask<bool> ClaimInTurnAsync(WorkerSlot<T> slot)
    {
        var turn = _claimTurn!;
        EnterSeeking(slot); // a worker that waits for its turn will take room: nobody starts another for it
        try
        {
            await turn.WaitAsync(_permits.WaitToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (_permits.WaitToken.IsCancellationRequested)
        {
            return GiveUp(slot);
        }

        try
        {
            if (!slot.HoldsAnyPermit)
            {
                if (_permits.TryTakeBorrowed())
                {
                    slot.HoldsBorrowed = true;
                }
                else if (!TryTakePermit(slot) && !_limit.IsShared && !await WaitForPermitAsync(slot, _permits.WaitToken).ConfigureAwait(false))
                {
                    // Pull only with a permit in hand: this call alone uses the limit, so the wait ends as its own bodies
                    // finish (or as the limit rises).
                    return GiveUp(slot);
                }
            }

            if (_stopped)
            {
                return GiveUp(slot);
            }

            bool claimed;
            try
            {
                // GetEnumerator and MoveNext are user code: they may throw before the claim is even pending.
                var claim = _source.TryClaimAsync(slot, Token);
                if (!claim.IsCompleted)
                {
                    GivePermit(slot); // the source is quiet: hold no permit while it is
                }

                claimed = await claim.ConfigureAwait(false);
            }
            catch (Exception e)
            {
                RecordSourceFailure(e);
                claimed = false;
            }

            if (!claimed)
            {
                if (!_stopped)
                {
                    _permits.MarkExhausted(); // the end of the source: the call's other waits end now
                }

                return GiveUp(slot);
            }

            if (_rateLimiter is not null)
            {
                GivePermit(slot); // the rate limiter may make us wait: never with a permit of the pool
                if (!await AcquireLeaseAsync(slot, Token).ConfigureAwait(false))
                {
                    return GiveUp(slot); // canceled: the pulled item never runs
                }
            }

            // Still in turn: a worker holding a pulled item waits for its permit before the next worker may pull.
            if (!await HoldPermitAsync(slot).ConfigureAwait(false))
            {
                return GiveUp(slot); // canceled: the pulled item never runs
            }

            if (_stopped)
            {
                return GiveUp(slot);
            }

            LeaveSeeking(slot);
            slot.InWindow = false;
            return true;
        }
        finally
        {
            turn.Release();
        }
    }

    /// <summary>Waits out an overloaded item's delay, then takes a lease and a permit for its next attempt; false when the run was canceled first.</summary>
    private async ValueTask<bool> WaitToRetryAsync(WorkerSlot<T> slot)
    {
        // The worker means to take a permit again: counted as seeking, nobody is started for the room it gave back (the
        // downstream said it is overloaded: the room is better left than filled).
        EnterSeeking(slot);
        try
        {
            await Task.Delay(slot.RetryDelay, _limit.TimeProvider, Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (Token.IsCancellationRequested)
        {
            return false;
        }

        if (_stopped || (_rateLimiter is not null && !await AcquireLeaseAsync(slot, Token).ConfigureAwait(false)))
        {
            return false;
        }

        if (!await HoldPermitAsync(slot).ConfigureAwait(false))
        {
            return false;
        }

        LeaveSeeking(slot);
        return !_stopped;
    }

    /// <summary>Takes one permit of the rate limiter for the slot's next attempt, asking again after a refusal; false when <paramref name="cancellationToken"/> was canceled first.</summary>
    private async ValueTask<bool> AcquireLeaseAsync(WorkerSlot<T> slot, CancellationToken cancellationToken)
    {
        try
        {
            while (true)
            {
                var lease = _rateLimiter!.AttemptAcquire(1);
                if (!lease.IsAcquired)
                {
                    lease.Dispose();
                    lease = await _rateLimiter.AcquireAsync(1, cancellationToken).ConfigureAwait(false);
                }

                if (lease.IsAcquired)
                {
                    slot.Lease = lease;
                    return true;
                }

                // Refused (the limiter's queue is full): ask again when it says, or after a short pause.
                var wait = lease.TryGetMetadata(MetadataName.RetryAfter, out var retryAfter) ? retryAfter : OverloadBackoff.LeaseRetryDelay;
                lease.Dispose();
                await Task.Delay(wait, _limit.TimeProvider, cancellationToken).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            return false;
        }
    }

    /// <summary>Takes a permit of the pool without waiting, recorded on the slot.</summary>
    private bool TryTakePermit(WorkerSlot<T> slot)
    {
        if (!_permits.TryTake())
        {
            return false;
        }

        slot.HoldsPermit = true;
        LeaveSeeking(slot);
        return true;
    }

    /// <summary>Makes sure a worker that holds an item holds a permit: the one it has, one taken now, or one waited for (false when the run is canceled first).</summary>
    private ValueTask<bool> HoldPermitAsync(WorkerSlot<T> slot) =>
        slot.HoldsAnyPermit || TryTakePermit(slot) ? new(true) : WaitForPermitAsync(slot, Token);

    /// <summary>Waits for a permit for a worker that holds an item, or the turn to pull one (not as the call's waiter: it must not retire); false when canceled.</summary>
    private async ValueTask<bool> WaitForPermitAsync(WorkerSlot<T> slot, CancellationToken cancellationToken)
    {
        if (!await _limit.WaitAsync(cancellationToken).ConfigureAwait(false))
        {
            return false;
        }

        _permits.CountTaken();
        slot.HoldsPermit = true;
        LeaveSeeking(slot);
        return true;
    }

    /// <summary>Gives the slot's permit of the pool back, if it holds one; a borrowed permit stays (it is not the pool's).</summary>
    private void GivePermit(WorkerSlot<T> slot)
    {
        if (slot.HoldsPermit)
        {
            slot.HoldsPermit = false;
            _permits.Give();
        }
    }

    private void EnterSeeking(WorkerSlot<T> slot)
    {
        if (!slot.Seeking)
        {
            slot.Seeking = true;
            _permits.EnterSeeking();
        }
    }

    private void LeaveSeeking(WorkerSlot<T> slot)
    {
        if (slot.Seeking)
        {
            slot.Seeking = false;
            _permits.LeaveSeeking();
        }
    }

    /// <summary>Gives an ordered stream's window slot back if the worker holds one for an unclaimed item; true if it did.</summary>
    private bool LeaveWindow(WorkerSlot<T> slot)
    {
        if (!slot.InWindow)
        {
            return false;
        }

        slot.InWindow = false;
        ClaimAbandoned();
        return true;
    }

    private static void ReleaseLease(WorkerSlot<T> slot)
    {
        slot.Lease?.Dispose();
        slot.Lease = null;
    }

    /// <summary>
    /// Retires a worker that holds no item: it gives back everything it holds (window slot, lease, permit, its place among
    /// the seekers) and only then counts itself out, so nothing of a retired worker is left when the last worker completes
    /// the call. The call's last worker stays: it takes its place among the seekers again, and <see cref="PermitLook.Again"/>
    /// says it must take again the window slot or lease it gave back.
    /// </summary>
    private PermitLook RetireOrStay(WorkerSlot<T> slot)
    {
        var mustTakeAgain = slot.InWindow || slot.Lease is not null;
        GiveUp(slot);
        if (TryRetire(slot))
        {
            return PermitLook.GaveUp;
        }

        EnterSeeking(slot);
        return mustTakeAgain ? PermitLook.Again : PermitLook.Stayed;
    }

    /// <summary>
    /// Counts a retiring worker out of the call's active workers, unless it is the last one (one compare-and-swap, so two
    /// workers that find no room at once cannot both leave the call without a worker). False: this is the last worker.
    /// </summary>
    private bool TryRetire(WorkerSlot<T> slot)
    {
        var active = Volatile.Read(ref _activeWorkers);
        while (active > 1)
        {
            var seen = Interlocked.CompareExchange(ref _activeWorkers, active - 1, active);
            if (seen == active)
            {
                slot.Retired = true;
                return true;
            }

            active = seen;
        }

        return false;
    }

    /// <summary>Gives back everything a turn took short of an item (window slot, lease, permit, place among the seekers); always false.</summary>
    private bool GiveUp(WorkerSlot<T> slot)
    {
        LeaveWindow(slot);
        ReleaseLease(slot);
        GivePermit(slot);
        LeaveSeeking(slot);
        return false;
    }
}
