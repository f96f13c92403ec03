using System.Diagnostics;

using FanOut.Diagnostics;
using FanOut.Sources;

namespace FanOut.Execution;

/// <summary>Running one attempt of an item and settling it: timing, metrics, the verdict the limit learns from, the re-run rule.</summary>
internal abstract partial class FanOutRun<T>
{
    /// <summary>What became of one attempt of an item.</summary>
    private enum Disposition
    {
        /// <summary>Finished with something to publish (a result, or a failure taken as an outcome).</summary>
        Publish,

        /// <summary>Failed, and the failure is recorded.</summary>
        Recorded,

        /// <summary>Rejected as overloaded: runs again after <see cref="WorkerSlot{T}.RetryDelay"/>.</summary>
        Retry,
    }

    /// <summary>Starts the clock of one attempt; returns its start timestamp (0 when nothing times it).</summary>
    private long BeginAttempt(out bool timed)
    {
        // The limit's start hook (an adaptive limit counts its first window's starts there) runs once per attempt; the
        // duration histogram, when listened to, reads the plain clock and never feeds the limit.
        var samples = _wantsSamples;
        timed = samples || FanOutMetrics.Duration.Enabled;
        if (FanOutMetrics.InFlight.Enabled)
        {
            FanOutMetrics.InFlight.Add(1, _metricTags);
        }

        return samples ? _limit.RecordStart() : timed ? _limit.GetTimestamp() : 0;
    }

    /// <summary>The worker's deadline for its attempts, made by its first attempt; null when the run has no <see cref="FanOutOptions.ItemTimeout"/>.</summary>
    private ItemDeadline? DeadlineFor(ref ItemDeadline? deadline) =>
        _itemTimeout == Timeout.InfiniteTimeSpan ? null : deadline ??= new ItemDeadline(Token, _itemTimeout, _limit.TimeProvider);

    /// <summary>Starts one attempt's activity when the call is traced (a listener was there when it started); null otherwise, at the cost of one branch.</summary>
    private Activity? StartAttemptActivity(long index, int attempt) =>
        _tracing ? FanOutTracing.StartItem(_runActivity, _limit, index, attempt) : null;

    /// <summary>Calls the body for one attempt; a body that throws synchronously comes back as a completed, faulted attempt.</summary>
    private ValueTask InvokeAttempt(WorkerSlot<T> slot, long index, ItemDeadline? deadline, out Exception? failure)
    {
        try
        {
            failure = null;
            return InvokeAsync(slot.Item, index, slot, deadline is null ? Token : deadline.Start());
        }
        catch (Exception e)
        {
            failure = e;
            return default;
        }
    }

    /// <summary>
    /// Called when a body went asynchronous: the limit has room this worker cannot use until the body finishes. Starts two
    /// workers, so that a large room fills in a tree of worker starts (log depth) rather than a chain through the pool.
    /// </summary>
    private void OnBodyPending()
    {
        var reserved = 0;
        while (reserved < SpawnFanOut && _permits.TryReserveSeeker())
        {
            reserved++;
        }

        if (reserved > 0)
        {
            StartReservedWorkers(reserved);
        }
        else if (MayRise && _permits.TryReserveRiseWatcher())
        {
            // The limit may rise (an adaptive limit's ramp) before anything completes: a waiting worker takes the new room.
            StartReservedWorkers(1);
        }
    }

    /// <summary>Ends an attempt: gives the lease back, settles the outcome, and lets go of the item unless it runs again.</summary>
    private Disposition Settle(WorkerSlot<T> slot, long index, long start, bool timed, Exception? failure, ItemDeadline? deadline, Activity? activity)
    {
        ReleaseLease(slot);

        // A deadline that passed first fails the attempt whatever the body did (it may have ignored its token and returned).
        var timedOut = deadline is not null && deadline.End();
        if (timedOut)
        {
            failure = deadline!.Expired(index, failure);
        }

        var disposition = OnItemDone(slot, index, start, timed, failure, timedOut, out var outcome);
        if (activity is not null)
        {
            FanOutTracing.StopItem(activity, failure, outcome == ItemOutcome.Overloaded, disposition == Disposition.Retry, slot.Attempt, slot.RetryDelay);
        }

        if (disposition != Disposition.Retry)
        {
            slot.Item = default!; // the worker must not keep the item alive while it waits for its next one
        }

        return disposition;
    }

    private Disposition OnItemDone(WorkerSlot<T> slot, long index, long start, bool timed, Exception? failure, bool timedOut, out ItemOutcome outcome)
    {
        var canceled = _cts.IsCancellationRequested;

        // Judge the failure once: the limit learns from the verdict and the re-run rule follows it. The overload test
        // is user code; a throwing one means "not an overload", and its exception goes with the item's failure.
        Exception? callbackFailure = null;
        var mayRunAgain = false;
        outcome = canceled ? ItemOutcome.Canceled
            : failure is null ? ItemOutcome.Succeeded
            : timedOut ? OverloadRule.JudgeItemTimeout(out mayRunAgain)
            : OverloadRule.Judge(_limit, failure, ref callbackFailure, out mayRunAgain);
        try
        {
            if (_wantsSamples)
            {
                // The downstream's Retry-After goes with an overload: an adaptive limit pauses for it (docs/adaptive.md).
                var retryAfter = outcome == ItemOutcome.Overloaded && failure is not null ? RetryAfterHint.From(failure, _limit.TimeProvider.GetUtcNow()) : null;
                _limit.RecordCompletion(start, outcome, retryAfter);
            }
        }
        catch (Exception e)
        {
            callbackFailure ??= e; // a metrics listener the limit notified threw: never lost
        }
        finally
        {
            if (timed && FanOutMetrics.Duration.Enabled)
            {
                var seconds = (double)(_limit.GetTimestamp() - start) / _limit.TimeProvider.TimestampFrequency;
                FanOutMetrics.Duration.Record(seconds, _metricTags);
            }

            if (FanOutMetrics.InFlight.Enabled)
            {
                FanOutMetrics.InFlight.Add(-1, _metricTags);
            }
        }

        if (failure is null)
        {
            if (FanOutMetrics.Completed.Enabled)
            {
                FanOutMetrics.Completed.Add(1, _metricTags);
            }

            if (callbackFailure is not null)
            {
                RecordException(callbackFailure); // the limit's own hook failed on a success: a bug, never lost
            }

            return Disposition.Publish;
        }

        if (mayRunAgain && callbackFailure is null && !_stopped && slot.Attempt < _overloadRetries
            && OverloadRule.DelayBeforeAttempt(slot.Attempt + 1, failure, _limit.TimeProvider.GetUtcNow()) is { } delay)
        {
            slot.Attempt++;
            slot.RetryDelay = delay;
            if (FanOutMetrics.Retried.Enabled)
            {
                FanOutMetrics.Retried.Add(1, _metricTags);
            }

            return Disposition.Retry;
        }

        if (FanOutMetrics.Failed.Enabled)
        {
            FanOutMetrics.Failed.Add(1, _metricTags);
        }

        if (TakeFailure(slot, index, failure))
        {
            return Disposition.Publish;
        }

        if (_errors == ErrorMode.FailFast)
        {
            RecordException(callbackFailure is null ? failure : new AggregateException(failure, callbackFailure));
        }
        else
        {
            _failures.AddFailure(index, failure, callbackFailure);
        }

        ItemFailed(index);
        return Disposition.Recorded;
    }
}
