using System.Diagnostics;

using FanOut.Diagnostics;
using FanOut.Sources;

namespace FanOut.Execution;

/// <summary>
/// One fan-out call: its workers, its share of the limit, its token and its failures. Subclasses decide what a body
/// returns and where results go (an array, a stream); the worker loop, cancellation and error rules live here, once.
/// </summary>
/// <remarks>
/// One async loop per worker, not one task per item (Parallel.ForEachAsync's design). A worker takes a permit, claims an
/// item, runs its body and, while nobody else waits for the permit, keeps it for its next item, so a synchronous body
/// over an array costs an interlocked increment and a few field reads per item, with no allocation.
/// Workers start on the thread pool (the call returns before any body runs) and multiply on demand: a worker that finds
/// room under the limit starts one more, up to <see cref="ConcurrencyLimit.WorkerHint"/> for synchronous bodies and up to
/// the limit itself while bodies are pending. A worker that finds no permit waits, unless another worker of this call
/// already waits, in which case it retires (at most one waiter per call, however far an adaptive limit falls).
/// </remarks>
internal abstract class FanOutRun<T>
{
    /// <summary>Longest run of indices a worker reserves from an array or list (see <see cref="IndexedSource{T}"/>).</summary>
    private const int MaxChunk = 16;

    private readonly ItemSource<T> _source;
    private readonly ConcurrencyLimit _limit;
    private readonly ErrorMode _errors;
    private readonly CancellationToken _callerToken;
    private readonly CancellationTokenSource _cts;
    private readonly KeyValuePair<string, object?> _kindTag;
    private readonly int _maxWorkers;

    /// <summary>Guards <see cref="_exceptions"/> and <see cref="_failures"/>; never held while user code runs.</summary>
    private readonly Lock _lock = new();

    /// <summary>Exceptions that fault the call as they are: FailFast body failures and source failures.</summary>
    private List<Exception>? _exceptions;

    /// <summary>RunAll body failures, tied to their items.</summary>
    private List<FanOutFailure>? _failures;

    /// <summary>Workers started and not yet finished; the one that brings it to 0 completes the call.</summary>
    private int _activeWorkers;

    /// <summary>Workers of this call waiting for a permit (0 or 1, briefly 2).</summary>
    private int _waitingWorkers;

    /// <summary>Set by a FailFast failure, a source failure or <see cref="Abort"/>: no new item starts.</summary>
    private volatile bool _stopped;

    protected FanOutRun(ItemSource<T> source, FanOutOptions options, CancellationToken cancellationToken)
    {
        _source = source;

        // Indexed sources may hand out runs of indices, except to an ordered stream, whose window counts single claims.
        source.MaxChunk = options.Ordered && this is IOrderedRun ? 1 : MaxChunk;
        _limit = options.ResolveLimit();
        _errors = options.Errors;
        _callerToken = cancellationToken;
        _cts = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        _kindTag = new KeyValuePair<string, object?>(FanOutInstruments.LimitKindTag, _limit.Kind);
        _maxWorkers = source.KnownCount >= 0 ? Math.Max(1, source.KnownCount) : int.MaxValue;
    }

    /// <summary>The token every body and the async enumerator get.</summary>
    protected CancellationToken Token => _cts.Token;

    protected ErrorMode Errors => _errors;

    /// <summary>How many items the source had; valid once every worker has stopped.</summary>
    protected int ItemCount => _source.KnownCount >= 0 ? _source.KnownCount : _source.ClaimedCount;

    /// <summary>Starts the first worker on the thread pool; it starts the others.</summary>
    public void Start()
    {
        FanOutMetrics.RecordLimit(_limit.Current, _limit.Kind);
        _activeWorkers = 1;

        // QueueUserWorkItem flows the caller's ExecutionContext (AsyncLocal values) to the worker, and every worker
        // after it inherits it from the worker that starts it.
        ThreadPool.QueueUserWorkItem(static run => _ = run.WorkerAsync(), this, preferLocal: false);
    }

    /// <summary>Stops new items and cancels the token (a stream's consumer left early).</summary>
    public void Abort() => Stop();

    /// <summary>Runs one item's body and stores its result; throws what the body throws.</summary>
    protected abstract ValueTask InvokeAsync(T item, int index, WorkerSlot<T> worker, CancellationToken cancellationToken);

    /// <summary>
    /// Called before a worker may wait (for a permit, an item, a pending body) and when it stops: a stream publishes
    /// the results it batched, so that no finished result waits on an idle worker.
    /// </summary>
    protected virtual ValueTask FlushAsync(WorkerSlot<T> worker) => default;

    /// <summary>Called before each claim; a stream that yields in order waits here for room in its window. False: stop.</summary>
    protected virtual ValueTask<bool> BeforeClaimAsync(CancellationToken cancellationToken) => new(true);

    /// <summary>Undoes <see cref="BeforeClaimAsync"/> when no item was claimed after it.</summary>
    protected virtual void ClaimAbandoned()
    {
    }

    /// <summary>Called after a body failed, once the failure is recorded.</summary>
    protected virtual void ItemFailed(int index)
    {
    }

    /// <summary>
    /// Completes the call once: canceled if the caller's token was canceled (the caller's cancellation wins), faulted with
    /// <paramref name="exceptions"/> if any, otherwise successful.
    /// </summary>
    protected abstract void Complete(bool canceled, CancellationToken callerToken, IReadOnlyList<Exception>? exceptions);

    /// <summary>Builds the RunAll exception from the failures, in index order.</summary>
    protected abstract Exception CreateRunAllException(List<FanOutFailure> failures);

    private async Task WorkerAsync()
    {
        var slot = new WorkerSlot<T>();
        var holdsPermit = false;
        try
        {
            while (!_stopped && !_cts.IsCancellationRequested)
            {
                if (!holdsPermit)
                {
                    if (!_limit.TryAcquire())
                    {
                        // One waiter per call is enough: when it gets its permit it starts workers for any further room.
                        // A worker still holding reserved indices waits regardless: nobody else would run them.
                        if (Interlocked.Increment(ref _waitingWorkers) > 1 && !slot.HasReserved)
                        {
                            Interlocked.Decrement(ref _waitingWorkers);
                            return;
                        }

                        await FlushAsync(slot).ConfigureAwait(false);
                        bool granted;
                        try
                        {
                            granted = await _limit.WaitAsync(_cts.Token).ConfigureAwait(false);
                        }
                        finally
                        {
                            Interlocked.Decrement(ref _waitingWorkers);
                        }

                        if (!granted)
                        {
                            return;
                        }
                    }

                    holdsPermit = true;
                    if (_stopped || _cts.IsCancellationRequested)
                    {
                        return;
                    }
                }

                if (!await BeforeClaimAsync(_cts.Token).ConfigureAwait(false))
                {
                    return;
                }

                bool claimed;
                try
                {
                    var claim = _source.TryClaimAsync(slot, _cts.Token);
                    if (!claim.IsCompleted)
                    {
                        await FlushAsync(slot).ConfigureAwait(false);
                    }

                    claimed = await claim.ConfigureAwait(false);
                }
                catch (Exception e)
                {
                    ClaimAbandoned();
                    RecordException(e);
                    return;
                }

                if (!claimed)
                {
                    ClaimAbandoned();
                    return;
                }

                // Room for another worker? Synchronous bodies only use up to WorkerHint workers (more would time-slice the cores).
                if (_limit.HasRoom && Volatile.Read(ref _activeWorkers) < _limit.WorkerHint)
                {
                    TryStartWorker();
                }

                await RunItemAsync(slot).ConfigureAwait(false);

                if (_limit.ShouldReturnPermit)
                {
                    holdsPermit = false;
                    _limit.Release();
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
            try
            {
                await FlushAsync(slot).ConfigureAwait(false);
            }
            catch (Exception e) when (e is not OperationCanceledException || !_cts.IsCancellationRequested)
            {
                RecordException(e);
            }
            catch (OperationCanceledException)
            {
                // The run was canceled while the stream was full: the consumer will not read these results.
            }

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

    private async ValueTask RunItemAsync(WorkerSlot<T> slot)
    {
        var index = slot.Index;
        var item = slot.Item;
        slot.Item = default!; // the worker must not keep the item alive while it waits for its next one

        var timed = _limit.WantsSamples || FanOutMetrics.Duration.Enabled;
        var start = timed ? _limit.GetTimestamp() : 0;
        if (FanOutMetrics.InFlight.Enabled)
        {
            FanOutMetrics.InFlight.Add(1, _kindTag);
        }

        Exception? failure = null;
        try
        {
            var pending = InvokeAsync(item, index, slot, _cts.Token);
            slot.ChunkSize = pending.IsCompleted ? Math.Min(slot.ChunkSize * 2, MaxChunk) : 1;
            if (!pending.IsCompleted)
            {
                if (_limit.HasRoom && Volatile.Read(ref _activeWorkers) < _maxWorkers)
                {
                    // The body went asynchronous: the limit has room this worker cannot use until the body finishes.
                    TryStartWorker();
                }

                await FlushAsync(slot).ConfigureAwait(false);
            }

            await pending.ConfigureAwait(false);
        }
        catch (Exception e)
        {
            failure = e;
        }

        OnItemDone(index, start, timed, failure);
    }

    private void OnItemDone(int index, long start, bool timed, Exception? failure)
    {
        var canceled = _cts.IsCancellationRequested;
        if (timed)
        {
            _limit.OnItemCompleted(start, failure, canceled);
            if (FanOutMetrics.Duration.Enabled)
            {
                var seconds = (double)(_limit.GetTimestamp() - start) / _limit.TimestampFrequency;
                FanOutMetrics.Duration.Record(seconds, _kindTag);
            }
        }

        if (FanOutMetrics.InFlight.Enabled)
        {
            FanOutMetrics.InFlight.Add(-1, _kindTag);
        }

        if (failure is null)
        {
            if (FanOutMetrics.Completed.Enabled)
            {
                FanOutMetrics.Completed.Add(1, _kindTag);
            }

            return;
        }

        if (FanOutMetrics.Failed.Enabled)
        {
            FanOutMetrics.Failed.Add(1, _kindTag);
        }

        if (_errors == ErrorMode.FailFast)
        {
            RecordException(failure);
        }
        else
        {
            lock (_lock)
            {
                AssertInvariants();
                (_failures ??= []).Add(new FanOutFailure(index, failure));
            }
        }

        ItemFailed(index);
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

    private void TryStartWorker()
    {
        // Count the worker before it is queued: the call cannot complete between the check and the start
        // (the starting worker itself is counted, so the count is at least 1 here).
        var seen = Volatile.Read(ref _activeWorkers);
        if (seen >= _maxWorkers || Interlocked.CompareExchange(ref _activeWorkers, seen + 1, seen) != seen)
        {
            return; // at the cap, or another worker just started one: either way there is no need for two
        }

        ThreadPool.QueueUserWorkItem(static run => _ = run.WorkerAsync(), this, preferLocal: false);
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
            lock (_lock)
            {
                (_exceptions ??= []).Add(e);
            }
        }

        List<Exception>? exceptions;
        lock (_lock)
        {
            AssertInvariants();
            exceptions = _exceptions;
            if (_failures is { Count: > 0 } failures)
            {
                failures.Sort(static (a, b) => a.Index.CompareTo(b.Index));
                (exceptions ??= []).Add(CreateRunAllException(failures));
            }
        }

        var canceled = _callerToken.IsCancellationRequested;
        _cts.Dispose();
        Complete(canceled, _callerToken, exceptions);
    }

    [Conditional("DEBUG")]
    private void AssertInvariants()
    {
        Debug.Assert(_lock.IsHeldByCurrentThread);
        Debug.Assert(_errors == ErrorMode.RunAll || _failures is null);
        Debug.Assert(Volatile.Read(ref _activeWorkers) >= 0);
    }
}
