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
                if (!window.IsCompleted)
                {
                    _permits.ReturnToSeekIfHeld(slot); // an ordered stream's window is full: wait for the consumer without a permit
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

            _permits.Arrived(slot);
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
        _permits.EnsureSeeking(slot);
        if (_permits.TryTakeBorrowed(slot))
        {
            return PermitLook.Taken;
        }

        while (true)
        {
            if (_permits.TryTake(slot))
            {
                return PermitLook.Taken;
            }

            if (_stopped || NoItemsLeft)
            {
                return PermitLook.GaveUp;
            }

            if (!_permits.RoomMayComeFromOutside || !_permits.TryBecomeWaiter(slot))
            {
                // Retire: room comes back to the call's own workers, or another worker of the call waits for it.
                var retired = RetireOrStay(slot);
                if (retired != PermitLook.Stayed)
                {
                    return retired;
                }

                if (!_permits.TryBecomeWaiter(slot))
                {
                    await Task.Yield(); // the call's waiter is leaving as this last worker looks: look again
                    continue;
                }
            }

            return await _permits.WaitAsWaiterAsync(slot).ConfigureAwait(false) ? PermitLook.Taken : PermitLook.GaveUp;
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
        _permits.GiveIfHeld(slot); // kept from the last item (an array's worker), or none

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

        while (!_permits.TryEnterLeaseQueue(slot))
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

        // Queued, and seeking: the room it gave back is still its own until it holds a permit again.
        try
        {
            return await AcquireLeaseAsync(slot, _permits.WaitToken).ConfigureAwait(false) ? PermitLook.Taken : PermitLook.GaveUp;
        }
        finally
        {
            _permits.LeaveLeaseQueue(slot);
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
        _permits.EnsureSeeking(slot); // a worker that waits for its turn will take room: nobody starts another for it
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
                if (!_permits.TryTakeBorrowed(slot) && !_permits.TryTake(slot) && !_limit.IsShared
                    && !await _permits.WaitForPermitAsync(slot, _permits.WaitToken).ConfigureAwait(false))
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
                    _permits.GiveIfHeld(slot); // the source is quiet: hold no permit of the pool while it is
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
                _permits.GiveIfHeld(slot); // the rate limiter may make us wait: never with a permit of the pool
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

            _permits.Arrived(slot);
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
        // The worker means to take a permit again: counted as seeking, nobody is started for the room it gives back (the
        // downstream said it is overloaded: the room is better left than filled).
        _permits.ReturnToSeekIfHeld(slot);

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

        _permits.Arrived(slot);
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

    /// <summary>Makes sure a worker that holds an item holds a permit: the one it has, one taken now, or one waited for (false when the run is canceled first).</summary>
    private ValueTask<bool> HoldPermitAsync(WorkerSlot<T> slot) =>
        slot.HoldsAnyPermit || _permits.TryTake(slot) ? new(true) : _permits.WaitForPermitAsync(slot, Token);

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
        if (_permits.TryRetire(slot))
        {
            return PermitLook.GaveUp;
        }

        _permits.EnsureSeeking(slot);
        return mustTakeAgain ? PermitLook.Again : PermitLook.Stayed;
    }

    /// <summary>Gives back everything a turn took short of an item (window slot, lease, permit, place among the seekers); always false.</summary>
    private bool GiveUp(WorkerSlot<T> slot)
    {
        LeaveWindow(slot);
        ReleaseLease(slot);
        _permits.GiveIfHeld(slot);
        _permits.LeaveSeeking(slot);
        return false;
    }
}
