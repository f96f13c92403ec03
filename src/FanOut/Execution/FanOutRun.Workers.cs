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

    /// <summary>Workers ever started by calls over <typeparamref name="T"/> in this process (for the cost benchmark: worker churn).</summary>
    internal static long s_workersStarted;

    /// <summary>True when no worker of this call is on its way to a permit and the limit may rise before anything completes: one should wait for the rise.</summary>
    private bool MayRise => _permits.Seeking == 0 && _limit.MayRiseUnprompted;

    /// <summary>Queues a new worker on the seeker's place reserved for it: its slot is the thread pool's work item, so a start allocates the slot and the loop only.</summary>
    private void QueueWorker()
    {
        var slot = new WorkerSlot<T>(this);
        CallPermits.AdoptReserved(slot);
        ThreadPool.UnsafeQueueUserWorkItem(slot, preferLocal: false);
    }

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
        ItemDeadline? deadline = null;
        try
        {
            while (!_stopped)
            {
                // Between items a permit of the pool is kept only where the next claim cannot wait, nobody else wants it
                // and the limit still has room for it (a limit that shrank takes its permits back here).
                if (slot.HoldsPoolPermit && (!_source.ClaimNeverWaits || _limit.ShouldReturnPermit))
                {
                    _permits.Give(slot);
                }

                if (slot.HoldsAnyPermit && _claimsInline)
                {
                    // The fast path of an array or list: the claim cannot wait and the kept permit covers the item.
                    if (!TryClaimInline(slot))
                    {
                        return;
                    }
                }
                else if (!await TakeTurnAsync(slot).ConfigureAwait(false))
                {
                    return;
                }

                slot.Attempt = 0;
                if (_stopped)
                {
                    ClaimAbandoned(); // stopped while the claim ran: nothing starts after a stop
                    return;
                }

                // Room for another worker? Synchronous bodies only use up to WorkerHint workers (more would time-slice the cores).
                if (_permits.ActiveWorkers < _limit.WorkerHint && _permits.TryReserveSeeker())
                {
                    StartReservedWorkers(1);
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

                    // Overloaded: the limit has backed off; wait without a permit of the pool, then run the same item again.
                    if (!await WaitToRetryAsync(slot).ConfigureAwait(false))
                    {
                        ClaimAbandoned(); // canceled while waiting: the item does not run again
                        return;
                    }
                }

                if (disposition != Disposition.Publish || TryPublish(slot, index))
                {
                    continue;
                }

                // The consumer is behind: never wait for it with a permit of the pool (its code may need the same limit).
                // The worker takes one again right after, so it counts as seeking: nobody is started for the room it gave
                // back (workers would otherwise multiply, each holding a result, while the consumer lags).
                _permits.ReturnToSeekIfHeld(slot);

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
            // Whatever the worker still holds goes back here, whatever threw on the way (the slot records each as it is
            // taken). A lease's Dispose and a limit's Release are user code: what they throw is recorded, and neither stops
            // the rest from going back nor the worker from counting itself out (a call must never be left uncompleted).
            deadline?.Dispose();
            LeaveWindow(slot);
            try
            {
                ReleaseLease(slot);
            }
            catch (Exception e)
            {
                RecordException(e);
            }

            try
            {
                _permits.GiveIfHeld(slot);
            }
            catch (Exception e)
            {
                RecordException(e);
            }

            try
            {
                _permits.LeaveSeeking(slot);
                _permits.ReturnBorrowedIfHeld(slot);
                CallPermits.AssertStopping(slot);
            }
            catch (Exception e)
            {
                RecordException(e); // a protocol invariant broken (Debug builds assert them): fail the call, never hang it
            }

            if (_permits.Stop(slot))
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

        bool claimed;
        try
        {
            claimed = _source.TryClaim(slot);
        }
        catch (Exception e)
        {
            RecordSourceFailure(e); // a list's indexer, GetEnumerator or MoveNext threw
            claimed = false;
        }

        // The end of the items (found, or the last of a known count taken): the call's waits for a permit end now. One field
        // compare per item on the fast path, not the source's counts.
        if (!claimed || slot.Index == _lastIndex)
        {
            _permits.MarkExhausted();
        }

        return claimed;
    }

    /// <summary>
    /// Starts up to <paramref name="count"/> workers whose room is already reserved among the call's seekers, within the
    /// cap on workers; a reservation the cap refuses is given back.
    /// </summary>
    private void StartReservedWorkers(int count)
    {
        var starting = _permits.StartReserved(count, _maxWorkers);
        Interlocked.Add(ref s_workersStarted, starting);
        for (var i = 0; i < starting; i++)
        {
            QueueWorker();
        }
    }
}
