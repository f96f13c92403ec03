using System.Runtime.CompilerServices;
using System.Threading.RateLimiting;

using FanOut.Sources;

namespace FanOut.Execution;

/// <summary>The permit protocol: in which order a worker takes its window slot, its item, its lease and its permit.</summary>
/// <remarks>
/// <para>
/// A worker without a permit first counts itself among the call's seekers; while the seekers fit in the limit's room it
/// pulls its item and then takes the permit, which is there for it unless another call took it meanwhile. A worker that
/// does not fit pulls nothing: so with every body blocked under <c>Fixed(D)</c> exactly D items have been pulled, as with
/// Parallel.ForEachAsync, and none after a FailFast failure. Such a worker retires (a worker that finishes an item starts
/// another when room appears), except one waiter per call where room can appear with no item of this call finishing:
/// an adaptive limit that may rise unprompted, or a limit other calls share. That waiter takes its permit before it pulls,
/// except on a shared limit over a lazy source, where it pulls first so that a quiet source never holds a permit others
/// could use: the pull-ahead is then one item per call, plus one per worker that lost the last permit to another call.
/// </para>
/// <para>
/// A rate limiter's lease is never waited for with a permit held. A permit is held only while a body runs, or from one
/// item to the next of an array or list while nobody else wants it.
/// </para>
/// </remarks>
internal abstract partial class FanOutRun<T>
{
    /// <summary>Workers of this call waiting for a permit as the call's one waiter.</summary>
    private int _waitingWorkers;

    /// <summary>Workers of this call between deciding to look for a permit and holding one: the room they will take.</summary>
    private int _seekingWorkers;

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

        // A worker without a permit counts itself as seeking one until it holds it: the room the seekers will take is spoken
        // for, so no more items are pulled than there are permits to run them (exactly D with every body blocked at D).
        var seeking = !holdsPermit;
        var waiter = false;
        if (seeking && Interlocked.Increment(ref _seekingWorkers) > Room)
        {
            // No room for this worker. Waiting is needed only where nothing else would start a worker when room appears:
            // a limit that may rise before anything completes, or one that another call (or process) shares, whose
            // waiters are served in turn. Otherwise retire: a worker that finishes an item starts another when room appears.
            if ((!_limit.MayRiseUnprompted && !_limit.IsShared) || Interlocked.CompareExchange(ref _waitingWorkers, 1, 0) != 0)
            {
                Interlocked.Decrement(ref _seekingWorkers);
                return GiveUp(holdsPermit: false, _hasWindow);
            }

            waiter = true;
        }

        try
        {
            if (waiter && !PullsAhead)
            {
                // Wait for the permit before pulling: an item is pulled only when a body can start on it.
                if (!await _limit.WaitAsync(Token).ConfigureAwait(false))
                {
                    return GiveUp(holdsPermit: false, _hasWindow);
                }

                holdsPermit = true;
            }

            if (_stopped || !await ClaimAsync(slot).ConfigureAwait(false))
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

            if (!holdsPermit && !_limit.TryAcquire())
            {
                // The shared limit's waiter, or a worker that lost the last room to another call (or to a limit that
                // dropped): wait holding the pulled item rather than drop it.
                if (!waiter)
                {
                    Interlocked.Increment(ref _waitingWorkers);
                }

                bool granted;
                try
                {
                    granted = await _limit.WaitAsync(Token).ConfigureAwait(false);
                }
                finally
                {
                    if (!waiter)
                    {
                        Interlocked.Decrement(ref _waitingWorkers);
                    }
                }

                if (!granted)
                {
                    ReleaseLease(slot);
                    return GiveUp(holdsPermit: false, _hasWindow); // canceled: the pulled item never runs
                }
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
            if (waiter)
            {
                Interlocked.Decrement(ref _waitingWorkers);
            }

            if (seeking)
            {
                Interlocked.Decrement(ref _seekingWorkers);
            }
        }
    }

    /// <summary>
    /// True when this call's waiter pulls its item before its permit: a shared limit over a lazy source, so that a quiet
    /// source never holds a permit others could use. The pull-ahead is one item for the waiter, plus one per worker that
    /// lost a race for the last permit.
    /// </summary>
    private bool PullsAhead => !_source.ClaimNeverWaits && _limit.IsShared;

    /// <summary>Claims the next item into the slot; false when the source is exhausted, failed (recorded) or the run was canceled.</summary>
    private async ValueTask<bool> ClaimAsync(WorkerSlot<T> slot)
    {
        try
        {
            return await _source.TryClaimAsync(slot, Token).ConfigureAwait(false);
        }
        catch (Exception e)
        {
            RecordSourceFailure(e);
            return false;
        }
    }

    /// <summary>Waits out an overloaded item's delay, then takes a lease and a permit for its next attempt; false when the run was canceled first.</summary>
    private async ValueTask<bool> WaitToRetryAsync(WorkerSlot<T> slot)
    {
        try
        {
            await Task.Delay(slot.RetryDelay, _limit.Clock, Token).ConfigureAwait(false);
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
                await Task.Delay(wait, _limit.Clock, Token).ConfigureAwait(false);
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
