using System.Runtime.CompilerServices;
using System.Threading.RateLimiting;

using FanOut.Sources;

namespace FanOut.Execution;

/// <summary>The permit protocol: in which order a worker takes its window slot, its permit, its lease and its item.</summary>
/// <remarks>
/// <para>
/// An item is pulled only when a body can start on it: with every body blocked at a limit of D, exactly D items have been
/// pulled, as with Parallel.ForEachAsync, and none after a FailFast failure (a stopped run pulls nothing).
/// </para>
/// <para>
/// Arrays, lists and enumerators (<see cref="PermitThenClaimAsync"/>): the permit first, then the item (one index from a
/// shared counter, or a MoveNext under the enumerator's lock), so items are claimed in source order and read only under a
/// permit. An enumerator whose MoveNext blocks holds its permit (and its thread) while it does, as it would in a loop. A worker with no room retires, except one waiter per
/// call where room can appear with no item of this call finishing (an adaptive limit that may rise, a shared limit).
/// </para>
/// <para>
/// Async sequences (<see cref="ClaimInTurnAsync"/>): the workers of a call take turns, holding nothing while they wait for
/// theirs. The worker in turn takes a permit, pulls, and gives the permit back while a pull waits (a quiet source never
/// holds a permit), taking one again when the item comes. On a shared limit the worker in turn may pull before it has a
/// permit, and keeps its turn until it gets one: the call is then at most one item ahead of its permits. That is the only
/// pull-ahead, and the one documented in docs/library.md.
/// </para>
/// <para>
/// A rate limiter's lease is never waited for with a permit others could use: the permit is given back while the lease is
/// awaited, except on a fixed limit this call alone uses, where nobody else could take the room and the worker keeps it.
/// A permit is held while a body runs, while an array's worker keeps it into its next item (nobody else wants it), and
/// for the instant of a pull that does not wait.
/// </para>
/// </remarks>
internal abstract partial class FanOutRun<T>
{
    /// <summary>Workers of this call waiting for a permit as the call's one waiter.</summary>
    private int _waitingWorkers;

    /// <summary>Workers of this call between deciding to look for a permit and holding one: the room they will take.</summary>
    private int _seekingWorkers;

    /// <summary>Workers of this call queued at the rate limiter for the lease of an item they have yet to claim.</summary>
    private int _leaseWaiters;

    /// <summary>A lazy source's turns: one worker of the call pulls (and takes its permit) at a time. Null for arrays and lists.</summary>
    private readonly SemaphoreSlim? _claimTurn;

    /// <summary>
    /// Takes the window slot, permit, lease and item for the worker's next item: true with all of them held; false when the
    /// source is exhausted or failed, the run stopped, or the worker should retire, with everything given back.
    /// </summary>
    /// <param name="slot">The worker's slot, which receives the item.</param>
    /// <param name="holdsPermit">True when the worker kept its permit from its last item.</param>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<bool> TakeTurnAsync(WorkerSlot<T> slot, bool holdsPermit)
    {
        if (_hasWindow)
        {
            var window = BeforeClaimAsync(Token);
            if (!window.IsCompleted && holdsPermit)
            {
                holdsPermit = false; // an ordered stream's window is full: wait for the consumer without a permit
                _limit.Release();
            }

            if (!await window.ConfigureAwait(false))
            {
                return GiveUp(holdsPermit, inWindow: false);
            }
        }

        return _source.ClaimsSynchronously
            ? await PermitThenClaimAsync(slot, holdsPermit).ConfigureAwait(false)
            : await ClaimInTurnAsync(slot, holdsPermit).ConfigureAwait(false);
    }

    /// <summary>
    /// An array, a list or an enumerator, whose claim runs on the calling thread: the permit first, then the item, so an
    /// item is read only when a body can start on it. A worker that finds no room retires, or waits as the call's one waiter where room can appear with
    /// no item of this call finishing (a limit that may rise unprompted, or one other calls share).
    /// </summary>
    private async ValueTask<bool> PermitThenClaimAsync(WorkerSlot<T> slot, bool holdsPermit)
    {
        if (!holdsPermit)
        {
            Interlocked.Increment(ref _seekingWorkers);
            try
            {
                if (!_limit.TryAcquire())
                {
                    // No room. Where only this call's finishing items can make room, retire, unless this is the call's last
                    // worker: then whoever holds the room is outside the call (a lease, code taking permits itself), and the
                    // last worker waits for it rather than end the call with items never run.
                    if (!_limit.MayRiseUnprompted && !_limit.IsShared)
                    {
                        if (_hasWindow)
                        {
                            ClaimAbandoned(); // before counting out: nothing of a retired worker runs after the call completes
                        }

                        if (TryRetire(slot))
                        {
                            return false; // retired, holding nothing
                        }

                        if (_hasWindow && !await BeforeClaimAsync(Token).ConfigureAwait(false))
                        {
                            return false; // the run stopped while the last worker took its window slot back
                        }
                    }

                    if (Interlocked.CompareExchange(ref _waitingWorkers, 1, 0) != 0)
                    {
                        return GiveUp(holdsPermit: false, _hasWindow); // retire: another worker of the call waits for room
                    }

                    try
                    {
                        if (!await _limit.WaitAsync(Token).ConfigureAwait(false))
                        {
                            return GiveUp(holdsPermit: false, _hasWindow);
                        }
                    }
                    finally
                    {
                        Interlocked.Decrement(ref _waitingWorkers);
                    }
                }
            }
            finally
            {
                Interlocked.Decrement(ref _seekingWorkers);
            }
        }

        if (_rateLimiter is not null && !await AcquireLeaseHoldingPermitAsync(slot).ConfigureAwait(false))
        {
            return GiveUp(holdsPermit: false, _hasWindow);
        }

        if (_stopped || !TryClaimInline(slot))
        {
            ReleaseLease(slot);
            return GiveUp(holdsPermit: true, _hasWindow);
        }

        return true;
    }

    /// <summary>
    /// Takes a lease for a worker that holds a permit. A lease that would wait is waited for without the permit (never wait
    /// for the rate limiter with a permit), which is then taken again. False, with nothing held: canceled, or the items
    /// left are already promised to workers queued for their leases.
    /// </summary>
    private async ValueTask<bool> AcquireLeaseHoldingPermitAsync(WorkerSlot<T> slot)
    {
        var lease = _rateLimiter!.AttemptAcquire(1);
        if (lease.IsAcquired)
        {
            slot.Lease = lease;
            return true;
        }

        lease.Dispose();

        // A lease is spent once granted, item or not: with an array or a list, queue for one only while more items are
        // left than workers already queued, so the end of a run spends no tokens on workers that would find nothing.
        if (_source.KnownCount >= 0 && _source.KnownCount - _source.ClaimedCount <= Volatile.Read(ref _leaseWaiters))
        {
            _limit.Release();
            return false;
        }

        // A limit this call alone uses, which can neither rise nor learn from samples: nobody else could use the room, so
        // the worker keeps its permit while it queues. The room stays its own exactly (given back and counted as seeking,
        // it could be taken by a worker another read of the counters started, which then queued too: 9 queued under
        // Fixed(8)), and queued workers never outnumber the limit.
        if (!_limit.IsShared && !_limit.MayRiseUnprompted && !_limit.WantsSamples)
        {
            Interlocked.Increment(ref _leaseWaiters);
            var leasedHolding = false;
            try
            {
                leasedHolding = await AcquireLeaseAsync(slot).ConfigureAwait(false);
                return leasedHolding;
            }
            finally
            {
                Interlocked.Decrement(ref _leaseWaiters);
                if (!leasedHolding)
                {
                    _limit.Release(); // canceled, or the limiter threw: nothing is held when the worker gives up
                }
            }
        }

        // The room given back while the lease is awaited is still this worker's: counted as seeking (before it is given
        // back), nobody is started for it. Otherwise every permit given back started another worker, which queued for a
        // lease of its own: the limiter's queue grew with the items rather than the limit, and the tokens those extra
        // waiters took were spent with no item left to claim (a 500/s bucket delivered 250 items/s).
        Interlocked.Increment(ref _seekingWorkers);
        Interlocked.Increment(ref _leaseWaiters);
        var queued = true;
        _limit.Release();
        try
        {
            var leased = await AcquireLeaseAsync(slot).ConfigureAwait(false);
            Interlocked.Decrement(ref _leaseWaiters);
            queued = false;
            if (!leased)
            {
                return false;
            }

            if (!_limit.TryAcquire() && !await _limit.WaitAsync(Token).ConfigureAwait(false))
            {
                ReleaseLease(slot);
                return false;
            }

            return true;
        }
        finally
        {
            if (queued)
            {
                Interlocked.Decrement(ref _leaseWaiters); // the limiter threw: no longer queued
            }

            Interlocked.Decrement(ref _seekingWorkers);
        }
    }

    /// <summary>
    /// An async sequence: one worker of the call at a time takes its turn, and the others
    /// wait for theirs holding nothing. The worker in turn takes its permit, then pulls. If the pull waits (a quiet source)
    /// it gives the permit back while it waits and takes one again when the item comes, so a quiet source never holds a
    /// permit. On a limit this call alone uses, nobody else can take that room, so exactly as many items are pulled as
    /// bodies can start; on a shared limit, the worker in turn pulls before it has a permit and keeps the turn while it
    /// waits for one, so the call pulls at most one item ahead.
    /// </summary>
    private async ValueTask<bool> ClaimInTurnAsync(WorkerSlot<T> slot, bool holdsPermit)
    {
        // Waiting for the turn counts as seeking: a worker that waits for its turn will take room, so nobody starts another for it.
        var turn = _claimTurn!;
        Interlocked.Increment(ref _seekingWorkers);
        try
        {
            await turn.WaitAsync(Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (Token.IsCancellationRequested)
        {
            Interlocked.Decrement(ref _seekingWorkers);
            return GiveUp(holdsPermit, _hasWindow);
        }

        try
        {
            if (!holdsPermit)
            {
                if (_limit.TryAcquire())
                {
                    holdsPermit = true;
                }
                else if (!_limit.IsShared)
                {
                    // Pull only with a permit in hand: this call alone uses the limit, so the wait ends as its own bodies
                    // finish (or as the limit rises). The worker in turn is the call's waiter.
                    if (!await WaitAsTheWaiterAsync().ConfigureAwait(false))
                    {
                        return GiveUp(holdsPermit: false, _hasWindow);
                    }

                    holdsPermit = true;
                }
            }

            if (_stopped)
            {
                return GiveUp(holdsPermit, _hasWindow);
            }

            bool claimed;
            try
            {
                // GetEnumerator and MoveNext are user code: they may throw before the claim is even pending.
                var claim = _source.TryClaimAsync(slot, Token);
                if (!claim.IsCompleted && holdsPermit)
                {
                    holdsPermit = false; // the source is quiet: hold no permit while it is
                    _limit.Release();
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
                return GiveUp(holdsPermit, _hasWindow);
            }

            if (_rateLimiter is not null)
            {
                if (holdsPermit)
                {
                    holdsPermit = false; // the rate limiter may make us wait: never with a permit
                    _limit.Release();
                }

                if (!await AcquireLeaseAsync(slot).ConfigureAwait(false))
                {
                    return GiveUp(holdsPermit: false, _hasWindow);
                }
            }

            // Still in turn: a worker holding a pulled item waits for its permit before the next worker may pull.
            if (!holdsPermit && !_limit.TryAcquire() && !await WaitAsTheWaiterAsync().ConfigureAwait(false))
            {
                ReleaseLease(slot);
                return GiveUp(holdsPermit: false, _hasWindow); // canceled: the pulled item never runs
            }

            if (_stopped)
            {
                ReleaseLease(slot);
                return GiveUp(holdsPermit: true, _hasWindow);
            }

            return true;
        }
        finally
        {
            Interlocked.Decrement(ref _seekingWorkers);
            turn.Release();
        }
    }

    /// <summary>Waits for a permit, counted as the call's waiter (no worker is started to wait beside it); false when canceled.</summary>
    private async ValueTask<bool> WaitAsTheWaiterAsync()
    {
        Interlocked.Increment(ref _waitingWorkers);
        try
        {
            return await _limit.WaitAsync(Token).ConfigureAwait(false);
        }
        finally
        {
            Interlocked.Decrement(ref _waitingWorkers);
        }
    }

    /// <summary>Waits out an overloaded item's delay, then takes a lease and a permit for its next attempt; false when the run was canceled first.</summary>
    private async ValueTask<bool> WaitToRetryAsync(WorkerSlot<T> slot)
    {
        try
        {
            await Task.Delay(slot.RetryDelay, _limit.TimeProvider, Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (Token.IsCancellationRequested)
        {
            return false;
        }

        if (_stopped || !await AcquireLeaseAsync(slot).ConfigureAwait(false))
        {
            return false;
        }

        if (!_limit.TryAcquire() && !await _limit.WaitAsync(Token).ConfigureAwait(false))
        {
            ReleaseLease(slot);
            return false;
        }

        if (_stopped)
        {
            ReleaseLease(slot);
            _limit.Release();
            return false;
        }

        return true;
    }

    /// <summary>Takes one permit of the rate limiter (when there is one) for the slot's next attempt; false when the run was canceled first.</summary>
    private async ValueTask<bool> AcquireLeaseAsync(WorkerSlot<T> slot)
    {
        if (_rateLimiter is null)
        {
            return true;
        }

        try
        {
            while (true)
            {
                var lease = _rateLimiter.AttemptAcquire(1);
                if (!lease.IsAcquired)
                {
                    lease.Dispose();
                    lease = await _rateLimiter.AcquireAsync(1, Token).ConfigureAwait(false);
                }

                if (lease.IsAcquired)
                {
                    slot.Lease = lease;
                    return true;
                }

                // Refused (the limiter's queue is full): ask again when it says, or after a short pause.
                var wait = lease.TryGetMetadata(MetadataName.RetryAfter, out var retryAfter) ? retryAfter : OverloadBackoff.LeaseRetryDelay;
                lease.Dispose();
                await Task.Delay(wait, _limit.TimeProvider, Token).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException) when (Token.IsCancellationRequested)
        {
            return false;
        }
    }

    private static void ReleaseLease(WorkerSlot<T> slot)
    {
        slot.Lease?.Dispose();
        slot.Lease = null;
    }

    /// <summary>Undoes a turn that will not run an item; always false.</summary>
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

    private bool GiveUp(bool holdsPermit, bool inWindow)
    {
        if (inWindow)
        {
            ClaimAbandoned();
        }

        if (holdsPermit)
        {
            _limit.Release();
        }

        return false;
    }
}
