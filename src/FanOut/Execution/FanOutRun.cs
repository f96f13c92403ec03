using System.Diagnostics;
using System.Runtime.CompilerServices;

using System.Threading.RateLimiting;

using FanOut.Diagnostics;
using FanOut.Sources;

namespace FanOut.Execution;

/// <summary>
/// One fan-out call: its workers, its share of the limit, its token and its failures. Subclasses decide what a body
/// returns and where results go (an array, a stream); the worker loop, the permit protocol, cancellation and error rules
/// live here, once.
/// </summary>
/// <remarks>
/// <para>
/// One async loop per worker, not one task per item (Parallel.ForEachAsync's design). Each turn of the loop claims an item
/// first and only then takes a permit, runs the body and gives the permit back before publishing the result: a permit is
/// held only while a body runs, never while a worker waits for the source, for the consumer of a stream or for a permit.
/// The one exception costs nothing to others: over an array or list, whose claim never waits, a worker keeps its permit
/// into its next item while nobody waits for one and the limit has not dropped, which saves two interlocked operations per
/// item.
/// </para>
/// <para>
/// Workers start on the thread pool (the call returns before any body runs) and multiply on demand: a worker that finds
/// room under the limit starts one more, up to <see cref="ConcurrencyLimit.WorkerHint"/> for synchronous bodies and up to
/// the item count while bodies are pending. A worker that has no permit and finds another worker of this call already
/// waiting for one retires instead of pulling an item: at most one item is pulled early per waiting worker.
/// </para>
/// <para>
/// Everything a worker starts (a claim, a body, a publication) it awaits before it looks at anything else, and the call
/// completes only after the last worker stopped and the enumerator was disposed. The run's token source is never
/// disposed (it owns no timer and no wait handle): a consumer that leaves at any moment can cancel it safely; the
/// registration on the caller's token is removed at completion.
/// </para>
/// </remarks>
internal abstract class FanOutRun<T>
{
    /// <summary>Longest run of indices a worker reserves from an array or list (see <see cref="IndexedSource{T}"/>).</summary>
    private const int MaxChunk = 16;

    /// <summary>Workers a worker starts when its body goes asynchronous and the limit has room: two makes the start-up a tree.</summary>
    private const int SpawnFanOut = 2;

    private readonly ItemSource<T> _source;
    private readonly ConcurrencyLimit _limit;
    private readonly ErrorMode _errors;
    private readonly CancellationToken _callerToken;
    private readonly CancellationTokenSource _cts = new();
    private readonly KeyValuePair<string, object?> _kindTag;
    private readonly long _maxWorkers;
    private readonly int _maxRetainedFailures;
    private readonly int _overloadRetries;
    private readonly RateLimiter? _rateLimiter;

    /// <summary>True when a worker that kept its permit may claim without the general path: an indexed source, no rate limiter, no ordered window.</summary>
    private readonly bool _claimsInline;

    /// <summary>Guards <see cref="_exceptions"/>, <see cref="_failures"/> and <see cref="_failureCount"/>; never held while user code runs.</summary>
    private readonly Lock _lock = new();

    private CancellationTokenRegistration _callerRegistration;

    /// <summary>Exceptions that fault the call as they are: FailFast body failures, source failures, failing token callbacks.</summary>
    private List<Exception>? _exceptions;

    /// <summary>RunAll body failures, tied to their items (at most <see cref="_maxRetainedFailures"/>).</summary>
    private List<FanOutFailure>? _failures;

    /// <summary>RunAll body failures, kept or not.</summary>
    private long _failureCount;

    /// <summary>Workers started and not yet finished; the one that brings it to 0 completes the call.</summary>
    private long _activeWorkers;

    /// <summary>Workers of this call waiting for a permit (each holds at most one pulled item).</summary>
    private int _waitingWorkers;

    /// <summary>Workers of this call between deciding to look for an item and holding a permit for it: the room they will take.</summary>
    private int _seekingWorkers;

    /// <summary>Set by a FailFast failure, a source failure or <see cref="Abort"/>: no new item starts.</summary>
    private volatile bool _stopped;

    protected FanOutRun(ItemSource<T> source, FanOutOptions options, CancellationToken cancellationToken, int maxRetainedFailures = int.MaxValue)
    {
        _source = source;

        // Indexed sources may hand out runs of indices, except to an ordered stream, whose window counts single claims.
        source.MaxChunk = options.Ordered && this is IOrderedRun ? 1 : MaxChunk;
        _limit = options.ResolveLimit();
        _errors = options.Errors;
        _callerToken = cancellationToken;
        _kindTag = new KeyValuePair<string, object?>(FanOutInstruments.LimitKindTag, _limit.Kind);
        _maxWorkers = source.KnownCount >= 0 ? Math.Max(1, source.KnownCount) : long.MaxValue;
        _maxRetainedFailures = maxRetainedFailures;
        _overloadRetries = options.OverloadRetries;
        _rateLimiter = options.RateLimiter;
        _claimsInline = source.ClaimNeverWaits && _rateLimiter is null && source.MaxChunk > 1;
    }

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

    /// <summary>The token every body and the async enumerator get.</summary>
    protected CancellationToken Token => _cts.Token;

    protected ErrorMode Errors => _errors;

    /// <summary>How many items the source had; valid once every worker has stopped.</summary>
    protected long ItemCount => _source.KnownCount >= 0 ? _source.KnownCount : _source.ClaimedCount;

    /// <summary>Permits the limit could grant right now.</summary>
    private int Room => Math.Max(0, _limit.Current - _limit.InFlight);

    /// <summary>True when no worker of this call waits for a permit and the limit may rise before anything completes: one should wait for the rise.</summary>
    private bool MayRise => Volatile.Read(ref _waitingWorkers) == 0 && _limit.MayRiseUnprompted;

    /// <summary>True when the limit has room that the workers already looking for an item will not take.</summary>
    private bool HasRoomForAnotherWorker => Room > Volatile.Read(ref _seekingWorkers);

    /// <summary>Starts the first worker on the thread pool; it starts the others.</summary>
    public void Start()
    {
        FanOutMetrics.RecordLimit(_limit.Current, _limit.Kind);
        _activeWorkers = 1;
        _callerRegistration = _callerToken.UnsafeRegister(static run => ((FanOutRun<T>)run!).Stop(), this);

        // QueueUserWorkItem flows the caller's ExecutionContext (AsyncLocal values) to the worker, and every worker
        // after it inherits it from the worker that starts it.
        ThreadPool.QueueUserWorkItem(static run => _ = run.WorkerAsync(), this, preferLocal: false);
    }

    /// <summary>Stops new items and cancels the token (a stream's consumer left early). Safe at any time, also after completion.</summary>
    public void Abort() => Stop();

    /// <summary>Runs one item's body and keeps its result (in the results, or in the worker's state until it is published); throws what the body throws.</summary>
    protected abstract ValueTask InvokeAsync(T item, long index, WorkerSlot<T> worker, CancellationToken cancellationToken);

    /// <summary>
    /// Publishes the item the worker just finished without waiting (a stream hands it to its consumer); false when that would
    /// wait, and then <see cref="PublishAsync"/> follows once the worker gave its permit back. Called for successes, and for
    /// failures the run took as outcomes (see <see cref="TakeFailure"/>).
    /// </summary>
    protected virtual bool TryPublish(WorkerSlot<T> worker, long index) => true;

    /// <summary>Publishes the worker's finished item, waiting for room; throws <see cref="OperationCanceledException"/> when the run is canceled first.</summary>
    protected virtual ValueTask PublishAsync(WorkerSlot<T> worker, long index, CancellationToken cancellationToken) => default;

    /// <summary>Called before each claim; a stream that yields in order waits here for room in its window. False: stop.</summary>
    protected virtual ValueTask<bool> BeforeClaimAsync(CancellationToken cancellationToken) => new(true);

    /// <summary>Undoes <see cref="BeforeClaimAsync"/> when no item was run after it.</summary>
    protected virtual void ClaimAbandoned()
    {
    }

    /// <summary>
    /// Offers a body's failure to the subclass before the run records it: true when the subclass takes it as an outcome to
    /// publish (a stream of outcomes), so it is neither recorded nor stops the run.
    /// </summary>
    protected virtual bool TakeFailure(WorkerSlot<T> worker, long index, Exception failure) => false;

    /// <summary>Called after a body failed, once the failure is recorded.</summary>
    protected virtual void ItemFailed(long index)
    {
    }

    /// <summary>
    /// Completes the call once: canceled if the caller's token was canceled (the caller's cancellation wins), faulted with
    /// <paramref name="exceptions"/> if any, otherwise successful.
    /// </summary>
    protected abstract void Complete(bool canceled, CancellationToken callerToken, IReadOnlyList<Exception>? exceptions);

    /// <summary>Builds the RunAll exception from the failures (in index order), carrying what the source threw.</summary>
    protected abstract Exception CreateRunAllException(List<FanOutFailure> failures, long failureCount, IReadOnlyList<Exception> sourceExceptions);

    private async Task WorkerAsync()
    {
        var slot = new WorkerSlot<T>();
        _source.Register(slot);
        var holdsPermit = false;
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

                // One worker of this call waiting for a permit is enough: when it gets one it starts workers for any
                // further room. A worker that finds no room becomes that waiter before it pulls an item, or retires if
                // another worker already is: at most one item is pulled ahead of a permit.
                var waiter = false;
                if (!holdsPermit && Interlocked.Increment(ref _seekingWorkers) > Room)
                {
                    // The room is spoken for by the workers already looking: be the call's one waiter, or retire.
                    if (Interlocked.CompareExchange(ref _waitingWorkers, 1, 0) != 0)
                    {
                        Interlocked.Decrement(ref _seekingWorkers);
                        return;
                    }

                    waiter = true;
                }

                bool granted;
                if (holdsPermit && _claimsInline)
                {
                    // The fast path of an array or list: the claim cannot wait and the kept permit covers the item.
                    try
                    {
                        granted = _source.TryClaimAsync(slot, Token).Result;
                    }
                    catch (Exception e)
                    {
                        RecordSourceFailure(e);
                        return;
                    }

                    if (!granted)
                    {
                        return;
                    }

                    slot.Attempt = 0;
                }
                else
                {
                    // The permit, if any, passes to ClaimAndAcquireAsync, which either returns with one or gives it back.
                    var kept = holdsPermit;
                    holdsPermit = false;
                    try
                    {
                        granted = await ClaimAndAcquireAsync(slot, kept, waiter).ConfigureAwait(false);
                    }
                    finally
                    {
                        if (waiter)
                        {
                            Interlocked.Decrement(ref _waitingWorkers);
                        }

                        if (!kept)
                        {
                            Interlocked.Decrement(ref _seekingWorkers);
                        }
                    }

                    if (!granted)
                    {
                        return;
                    }
                }

                holdsPermit = true;
                if (_stopped)
                {
                    ClaimAbandoned();
                    return;
                }

                // Room for another worker? Synchronous bodies only use up to WorkerHint workers (more would time-slice the cores).
                if (HasRoomForAnotherWorker && Volatile.Read(ref _activeWorkers) < _limit.WorkerHint)
                {
                    TryStartWorker();
                }

                var index = slot.Index;
                var disposition = await RunItemAsync(slot, index).ConfigureAwait(false);
                while (disposition == Disposition.Retry)
                {
                    // Overloaded: the limit has backed off; wait without a permit, then run the same item again.
                    holdsPermit = false;
                    _limit.Release();
                    if (!await WaitToRetryAsync(slot).ConfigureAwait(false))
                    {
                        ClaimAbandoned(); // canceled while waiting: the item does not run again
                        return;
                    }

                    holdsPermit = true;
                    disposition = await RunItemAsync(slot, index).ConfigureAwait(false);
                }

                if (disposition != Disposition.Publish || TryPublish(slot, index))
                {
                    continue;
                }

                // The consumer is behind: give the permit back before waiting for it.
                holdsPermit = false;
                _limit.Release();
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
            ReleaseLease(slot);
            if (holdsPermit)
            {
                _limit.Release();
            }

            if (Interlocked.Decrement(ref _activeWorkers) == 0)
            {
                await CompleteAsync().ConfigureAwait(false);
            }
        }
    }

    /// <summary>
    /// Claims the next item, then makes sure the worker holds a permit for it: true when both succeeded; false when the
    /// source is exhausted or failed, or the run stopped, with the claim undone and no permit held.
    /// </summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<bool> ClaimAndAcquireAsync(WorkerSlot<T> slot, bool holdsPermit, bool waiter)
    {
        var window = BeforeClaimAsync(Token);
        if (!window.IsCompleted && holdsPermit)
        {
            holdsPermit = false; // an ordered stream's window is full: wait for the consumer without a permit
            _limit.Release();
        }

        if (!await window.ConfigureAwait(false))
        {
            return GiveUp(holdsPermit, claimed: false);
        }

        bool claimed;
        try
        {
            claimed = await _source.TryClaimAsync(slot, Token).ConfigureAwait(false);
        }
        catch (Exception e)
        {
            RecordSourceFailure(e);
            return GiveUp(holdsPermit, claimed: true);
        }

        if (!claimed)
        {
            return GiveUp(holdsPermit, claimed: true);
        }

        slot.Attempt = 0;
        if (_rateLimiter is not null)
        {
            if (holdsPermit)
            {
                holdsPermit = false; // the rate limiter may make us wait: never with a permit
                _limit.Release();
            }

            if (!await AcquireLeaseAsync(slot).ConfigureAwait(false))
            {
                return GiveUp(holdsPermit: false, claimed: true);
            }
        }

        if (!holdsPermit && !_limit.TryAcquire())
        {
            // Raced for the last room with another worker: wait as a second waiter rather than drop the pulled item.
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
                return GiveUp(holdsPermit: false, claimed: true); // canceled: the pulled item never runs
            }
        }

        if (_stopped)
        {
            ReleaseLease(slot);
            return GiveUp(holdsPermit: true, claimed: true);
        }

        return true;
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
    private bool GiveUp(bool holdsPermit, bool claimed)
    {
        if (claimed)
        {
            ClaimAbandoned();
        }

        if (holdsPermit)
        {
            _limit.Release();
        }

        return false;
    }

    /// <summary>Runs one attempt of the claimed item's body and settles it; a body that completes synchronously costs no state machine.</summary>
    private ValueTask<Disposition> RunItemAsync(WorkerSlot<T> slot, long index)
    {
        var timed = _limit.WantsSamples || FanOutMetrics.Duration.Enabled;
        var start = timed ? _limit.GetTimestamp() : 0;
        if (FanOutMetrics.InFlight.Enabled)
        {
            FanOutMetrics.InFlight.Add(1, _kindTag);
        }

        ValueTask pending;
        try
        {
            pending = InvokeAsync(slot.Item, index, slot, Token);
            if (pending.IsCompleted)
            {
                slot.ChunkSize = Math.Min(slot.ChunkSize * 2, MaxChunk);
                pending.GetAwaiter().GetResult();
                return new ValueTask<Disposition>(Settle(slot, index, start, timed, failure: null));
            }
        }
        catch (Exception e)
        {
            return new ValueTask<Disposition>(Settle(slot, index, start, timed, e));
        }

        slot.ChunkSize = 1;
        var room = Room - Volatile.Read(ref _seekingWorkers);
        if (room > 0)
        {
            // The body went asynchronous: the limit has room this worker cannot use until the body finishes. Start two,
            // so that a large room fills in a tree of worker starts (log depth) rather than a chain through the pool.
            TryStartWorkers(Math.Min(room, SpawnFanOut));
        }
        else if (MayRise)
        {
            // The limit may rise (an adaptive limit's ramp) before anything completes: a waiting worker takes the new room.
            TryStartWorker();
        }

        return AwaitItemAsync(pending, slot, index, start, timed);
    }

    /// <summary>Awaits a body that went asynchronous. Pooled: it costs no allocation beyond the body's own.</summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<Disposition> AwaitItemAsync(ValueTask pending, WorkerSlot<T> slot, long index, long start, bool timed)
    {
        Exception? failure = null;
        try
        {
            await pending.ConfigureAwait(false);
        }
        catch (Exception e)
        {
            failure = e;
        }

        return Settle(slot, index, start, timed, failure);
    }

    /// <summary>Ends an attempt: gives the lease back, settles the outcome, and lets go of the item unless it runs again.</summary>
    private Disposition Settle(WorkerSlot<T> slot, long index, long start, bool timed, Exception? failure)
    {
        ReleaseLease(slot);
        var disposition = OnItemDone(slot, index, start, timed, failure);
        if (disposition != Disposition.Retry)
        {
            slot.Item = default!; // the worker must not keep the item alive while it waits for its next one
        }

        return disposition;
    }

    private Disposition OnItemDone(WorkerSlot<T> slot, long index, long start, bool timed, Exception? failure)
    {
        var canceled = _cts.IsCancellationRequested;

        // Judge the failure once: the limit learns from the verdict and the re-run rule follows it. The overload test
        // is user code; a throwing one means "not an overload", and its exception goes with the item's failure.
        Exception? callbackFailure = null;
        var overloaded = failure is not null && !canceled && IsOverload(failure, ref callbackFailure);
        try
        {
            if (timed)
            {
                _limit.OnItemCompleted(start, canceled ? ItemOutcome.Canceled : failure is null ? ItemOutcome.Succeeded : overloaded ? ItemOutcome.Overloaded : ItemOutcome.Failed);
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
                var seconds = (double)(_limit.GetTimestamp() - start) / _limit.TimestampFrequency;
                FanOutMetrics.Duration.Record(seconds, _kindTag);
            }

            if (FanOutMetrics.InFlight.Enabled)
            {
                FanOutMetrics.InFlight.Add(-1, _kindTag);
            }
        }

        if (failure is null)
        {
            if (FanOutMetrics.Completed.Enabled)
            {
                FanOutMetrics.Completed.Add(1, _kindTag);
            }

            if (callbackFailure is not null)
            {
                RecordException(callbackFailure); // the limit's own hook failed on a success: a bug, never lost
            }

            return Disposition.Publish;
        }

        if (overloaded && callbackFailure is null && !_stopped && slot.Attempt < _overloadRetries && ScheduleRetry(slot, failure))
        {
            if (FanOutMetrics.Retried.Enabled)
            {
                FanOutMetrics.Retried.Add(1, _kindTag);
            }

            return Disposition.Retry;
        }

        if (FanOutMetrics.Failed.Enabled)
        {
            FanOutMetrics.Failed.Add(1, _kindTag);
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
            lock (_lock)
            {
                AssertInvariants();
                _failureCount++;
                if ((_failures ??= []).Count < _maxRetainedFailures)
                {
                    _failures.Add(new FanOutFailure(index, failure) { CallbackException = callbackFailure });
                }
            }
        }

        ItemFailed(index);
        return Disposition.Recorded;
    }

    /// <summary>The limit's overload test, guarded: a throwing test reads as "not an overload" and its exception is kept.</summary>
    private bool IsOverload(Exception failure, ref Exception? callbackFailure)
    {
        try
        {
            return _limit.IsOverload(failure);
        }
        catch (Exception e)
        {
            callbackFailure = e;
            return false;
        }
    }

    /// <summary>Sets the slot up to run its overloaded item again; false when the downstream asked for too long a pause.</summary>
    private bool ScheduleRetry(WorkerSlot<T> slot, Exception failure)
    {
        var hint = RetryAfterHint.From(failure, _limit.Clock.GetUtcNow());
        if (hint > OverloadBackoff.MaxHonouredRetryAfter)
        {
            return false; // the downstream asked for a longer pause than a fan-out should sit out: fail the item now
        }

        slot.Attempt++;
        slot.RetryDelay = hint ?? OverloadBackoff.Delay(slot.Attempt);
        return true;
    }

    /// <summary>Records an exception that faults the call and stops it: no new item starts, the token is canceled.</summary>
    private void RecordException(Exception exception)
    {
        lock (_lock)
        {
            AssertInvariants();
            (_exceptions ??= []).Add(exception);
        }

        Stop();
    }

    /// <summary>
    /// Records what the source threw (GetEnumerator, MoveNext, Dispose). A source failure is a failure like a body's: in
    /// FailFast it cancels the token; in RunAll the items already pulled still run (the source, once it threw, yields no more).
    /// </summary>
    private void RecordSourceFailure(Exception exception)
    {
        lock (_lock)
        {
            AssertInvariants();
            (_exceptions ??= []).Add(exception);
        }

        if (_errors == ErrorMode.FailFast)
        {
            Stop();
        }
    }

    private void Stop()
    {
        _stopped = true;
        try
        {
            // Outside every lock: Cancel runs the callbacks bodies registered on the token.
            _cts.Cancel();
        }
        catch (AggregateException e)
        {
            lock (_lock)
            {
                AssertInvariants();
                (_exceptions ??= []).AddRange(e.InnerExceptions);
            }
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

        for (var i = 0; i < starting; i++)
        {
            ThreadPool.QueueUserWorkItem(static run => _ = run.WorkerAsync(), this, preferLocal: false);
        }
    }

    private async ValueTask CompleteAsync()
    {
        // Every worker has stopped: no body or MoveNext runs any more. Dispose the enumerator before completing,
        // so that nothing of this call runs after its task completes.
        try
        {
            await _source.DisposeAsync().ConfigureAwait(false);
        }
        catch (Exception e)
        {
            RecordSourceFailure(e);
        }

        // Unregister without waiting: a callback already running only cancels _cts, which stays valid.
        _callerRegistration.Unregister();

        List<Exception>? exceptions;
        lock (_lock)
        {
            AssertInvariants();
            exceptions = _exceptions;
            if (_failures is { Count: > 0 } failures)
            {
                // RunAll: the FanOutException comes first and carries what the source threw, so that a catch of it
                // (and the partial results it holds) is never defeated by a failing Dispose.
                failures.Sort(static (a, b) => a.Index.CompareTo(b.Index));
                exceptions = [CreateRunAllException(failures, _failureCount, (IReadOnlyList<Exception>?)_exceptions ?? [])];
            }
        }

        Complete(_callerToken.IsCancellationRequested, _callerToken, exceptions);
    }

    [Conditional("DEBUG")]
    private void AssertInvariants()
    {
        Debug.Assert(_lock.IsHeldByCurrentThread);
        Debug.Assert(_errors == ErrorMode.RunAll || _failures is null);
        Debug.Assert(Volatile.Read(ref _activeWorkers) >= 0);
    }
}
