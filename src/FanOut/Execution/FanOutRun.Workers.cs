using FanOut.Sources;

namespace FanOut.Execution;

/// <summary>The worker loop: one async loop per worker, not one task per item (Parallel.ForEachAsync's design).</summary>
/// <remarks>
/// <para>
/// Each turn of the loop takes a permit and an item (in the order <c>FanOutRun.Permits.cs</c> explains), runs the body,
/// and publishes the result. Over an array or list, whose claim never waits, a worker keeps its permit into its next item
/// while nobody waits for one and the limit has not dropped, which saves two interlocked operations per item.
/// </para>
/// <para>
/// Workers start on the thread pool (the call returns before any body runs) and multiply on demand: a worker that finds
/// room under the limit starts one more, up to <see cref="ConcurrencyLimit.WorkerHint"/> for synchronous bodies, and up to
/// the item count while bodies are pending. Starting a worker costs O(1): it is registered nowhere, and a worker that
/// stops leaves nothing behind.
/// </para>
/// </remarks>
internal abstract partial class FanOutRun<T>
{
    /// <summary>Workers a worker starts when its body goes asynchronous and the limit has room: two makes the start-up a tree.</summary>
    private const int SpawnFanOut = 2;

    /// <summary>Workers started and not yet finished; the one that brings it to 0 completes the call.</summary>
    private long _activeWorkers;

    /// <summary>Workers queued to the thread pool and not yet running: room they will take, so nobody starts more for it.</summary>
    private int _startingWorkers;

    /// <summary>Workers ever started by calls over <typeparamref name="T"/> in this process (for the cost benchmark: worker churn).</summary>
    internal static long s_workersStarted;

    /// <summary>Permits the limit could grant right now.</summary>
    private int Room => Math.Max(0, _limit.Current - _limit.InFlight);

    /// <summary>True when no worker of this call waits for a permit and the limit may rise before anything completes: one should wait for the rise.</summary>
    private bool MayRise => Volatile.Read(ref _waitingWorkers) == 0 && _limit.MayRiseUnprompted;

    /// <summary>Room that no worker of this call is already on its way to take (looking for a permit, or queued to start).</summary>
    private int UnclaimedRoom => Room - Volatile.Read(ref _seekingWorkers) - Volatile.Read(ref _startingWorkers);

    /// <summary>True when the limit has room that the workers already looking for a permit, or starting, will not take.</summary>
    private bool HasRoomForAnotherWorker => UnclaimedRoom > 0;

    /// <summary>Queues a new worker: its slot is the thread pool's work item, so a start allocates the slot and the loop only.</summary>
    private void QueueWorker() => ThreadPool.UnsafeQueueUserWorkItem(new WorkerSlot<T>(this), preferLocal: false);

    /// <summary>Runs a queued worker in the caller's ExecutionContext (AsyncLocal values flow into bodies, as with Parallel.ForEachAsync).</summary>
    internal void RunWorker(WorkerSlot<T> slot)
    {
        if (_executionContext is null)
        {
            _ = WorkerAsync(slot);
        }
        else
        {
            ExecutionContext.Run(_executionContext, static state => { var s = (WorkerSlot<T>)state!; _ = s.Owner.WorkerAsync(s); }, slot);
        }
    }

    private async Task WorkerAsync(WorkerSlot<T> slot)
    {
        Interlocked.Decrement(ref _startingWorkers);
        var holdsPermit = false;
        ItemDeadline? deadline = null;
        try
        {
            while (!_stopped)
            {
                // Between items a permit is kept only where the next claim cannot wait, nobody else wants it and the limit
                // still has room for it (a limit that shrank takes its permits back here).
                if (holdsPermit && (!_source.ClaimNeverWaits || _limit.ShouldReturnPermit))
                {
                    holdsPermit = false;
                    _limit.Release();
                }

                if (holdsPermit && _claimsInline)
                {
                    // The fast path of an array or list: the claim cannot wait and the kept permit covers the item.
                    if (!TryClaimInline(slot))
                    {
                        return;
                    }
                }
                else
                {
                    // The permit, if any, passes to TakeTurnAsync, which either returns with one or gives it back.
                    var kept = holdsPermit;
                    holdsPermit = false;
                    if (!await TakeTurnAsync(slot, kept).ConfigureAwait(false))
                    {
                        return;
                    }
                }

                holdsPermit = true;
                slot.Attempt = 0;
                if (_stopped)
                {
                    ClaimAbandoned(); // stopped while the claim ran: nothing starts after a stop
                    return;
                }

                // Room for another worker? Synchronous bodies only use up to WorkerHint workers (more would time-slice the cores).
                if (Volatile.Read(ref _activeWorkers) < _limit.WorkerHint && HasRoomForAnotherWorker)
                {
                    TryStartWorker();
                }

                // One attempt after another while the downstream says "overloaded": the body is awaited right here, in
                // the worker's own frame, so a pending body costs no state machine of ours.
                var index = slot.Index;
                Disposition disposition;
                while (true)
                {
                    var start = BeginAttempt(out var timed);
                    var attemptDeadline = DeadlineFor(ref deadline);
                    var activity = StartAttemptActivity(index, slot.Attempt);
                    var pending = InvokeAttempt(slot, index, attemptDeadline, out var failure);
                    if (failure is null)
                    {
                        if (!pending.IsCompleted)
                        {
                            OnBodyPending();
                        }

                        try
                        {
                            await pending.ConfigureAwait(false);
                        }
                        catch (Exception e)
                        {
                            failure = e;
                        }
                    }

                    disposition = Settle(slot, index, start, timed, failure, attemptDeadline, activity);
                    if (disposition != Disposition.Retry)
                    {
                        break;
                    }

                    // Overloaded: the limit has backed off; wait without a permit, then run the same item again.
                    holdsPermit = false;
                    _limit.Release();
                    if (!await WaitToRetryAsync(slot).ConfigureAwait(false))
                    {
                        ClaimAbandoned(); // canceled while waiting: the item does not run again
                        return;
                    }

                    holdsPermit = true;
                }

                if (disposition != Disposition.Publish || TryPublish(slot, index))
                {
                    continue;
                }

                // The consumer is behind. Give the permit back before waiting for it if anyone else could use it (another
                // call, a waiter, a limit that shrank); on a limit this call alone uses nobody could, and keeping it saves
                // the release, the take and the turn of every item while the consumer sets the pace.
                if (_limit.IsShared || _limit.ShouldReturnPermit)
                {
                    holdsPermit = false;
                    _limit.Release();
                }

                try
                {
                    await PublishAsync(slot, index, Token).ConfigureAwait(false);
                }
                catch (OperationCanceledException) when (Token.IsCancellationRequested)
                {
                    return; // the run is over (the consumer left, the caller canceled, FailFast): nobody reads this result
                }
            }
        }
        catch (Exception e)
        {
            // Not a body's exception (RunItemAsync catches those): a bug or a failing hook. Never lose it.
            RecordException(e);
        }
        finally
        {
            deadline?.Dispose();
            ReleaseLease(slot);
            if (holdsPermit)
            {
                _limit.Release();
            }

            // A worker that retired counted itself out already (TryRetire), while another worker was still active.
            if (!slot.Retired && Interlocked.Decrement(ref _activeWorkers) == 0)
            {
                await CompleteAsync().ConfigureAwait(false);
            }
        }
    }

    /// <summary>Claims the next item of a synchronous source under the worker's permit; false (permit still held) when there is none or the run stopped.</summary>
    private bool TryClaimInline(WorkerSlot<T> slot)
    {
        if (_stopped)
        {
            return false;
        }

        try
        {
            return _source.TryClaim(slot);
        }
        catch (Exception e)
        {
            RecordSourceFailure(e); // a list's indexer, GetEnumerator or MoveNext threw
            return false;
        }
    }

    private void TryStartWorker() => TryStartWorkers(1);

    /// <summary>Starts up to <paramref name="count"/> workers, within the cap; fewer if another worker just started some.</summary>
    private void TryStartWorkers(int count)
    {
        // Count the workers before they are queued: the call cannot complete between the check and the start
        // (the starting worker itself is counted, so the count is at least 1 here).
        var seen = Volatile.Read(ref _activeWorkers);
        var starting = (int)Math.Min(count, _maxWorkers - seen);
        if (starting <= 0 || Interlocked.CompareExchange(ref _activeWorkers, seen + starting, seen) != seen)
        {
            return; // at the cap, or another worker just started some: either way there is no need for more now
        }

        Interlocked.Add(ref s_workersStarted, starting);
        Interlocked.Add(ref _startingWorkers, starting);
        for (var i = 0; i < starting; i++)
        {
            QueueWorker();
        }
    }
}
