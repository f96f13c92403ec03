using System.Diagnostics;
using System.Threading.RateLimiting;

using FanOut.Diagnostics;
using FanOut.Sources;

namespace FanOut.Execution;

/// <summary>
/// One fan-out call: its workers, its share of the limit, its token and its failures. Subclasses decide what a body
/// returns and where results go (an array, a stream); the call's life (start, stop, completion) is in this file, the
/// worker loop in <c>FanOutRun.Workers.cs</c>, the permit protocol in <c>FanOutRun.Permits.cs</c>, and running and
/// settling one item in <c>FanOutRun.Items.cs</c>. docs/library.md describes the protocol as a whole.
/// </summary>
/// <remarks>
/// Everything a worker starts (a claim, a body, a publication) it awaits before it looks at anything else, and the call
/// completes only after the last worker stopped and the enumerator was disposed. The run's token source is never
/// disposed (it owns no timer and no wait handle): a consumer that leaves at any moment can cancel it safely; the
/// registration on the caller's token is removed at completion.
/// </remarks>
internal abstract partial class FanOutRun<T>
{
    private readonly ItemSource<T> _source;
    private readonly ConcurrencyLimit _limit;
    private readonly ErrorMode _errors;
    private readonly CancellationToken _callerToken;
    private readonly CancellationTokenSource _cts = new();
    private readonly KeyValuePair<string, object?>[] _metricTags;
    private readonly long _maxWorkers;
    private readonly int _overloadRetries;
    private readonly RateLimiter? _rateLimiter;
    private readonly FailureLog _failures;

    /// <summary>The call's share of its limit: the protocol's counters and rules (see <see cref="CallPermits"/>).</summary>
    private readonly CallPermits _permits;

    /// <summary>The call as code in its workers' flow sees it (nested use of the limit, re-runs left to the call).</summary>
    private readonly CallScope _scope;

    /// <summary><see cref="FanOutOptions.ItemTimeout"/>; <see cref="Timeout.InfiniteTimeSpan"/> when there is none.</summary>
    private readonly TimeSpan _itemTimeout;

    /// <summary>The limit's <see cref="ConcurrencyLimit.LearnsFromWork"/>, read once: whether it learns from every attempt.</summary>
    private readonly bool _wantsSamples;

    /// <summary>True when the run has an ordered window to enter before each claim (an ordered stream).</summary>
    private readonly bool _hasWindow;

    /// <summary>The index of a known-count source's last item (its claim ends the items); -1 when the count is unknown.</summary>
    private readonly long _lastIndex;

    /// <summary>True when a worker that kept its permit may claim synchronously: an indexed source, no rate limiter, no ordered window.</summary>
    private readonly bool _claimsInline;

    private CancellationTokenRegistration _callerRegistration;

    /// <summary>Whether the "FanOut" activity source had a listener when the call started: read once per call, branched on per attempt.</summary>
    private bool _tracing;

    /// <summary>The call's activity, when a listener sampled it; each attempt's activity is its child.</summary>
    private Activity? _runActivity;

    /// <summary>The caller's ExecutionContext, which every worker runs in; null when its flow is suppressed.</summary>
    private ExecutionContext? _executionContext;

    /// <summary>Set by a FailFast failure, a source failure or <see cref="Abort"/>: no new item is pulled or started.</summary>
    private volatile bool _stopped;

    protected FanOutRun(ItemSource<T> source, FanOutOptions options, CancellationToken cancellationToken, int maxRetainedFailures = int.MaxValue, bool hasWindow = false)
    {
        _source = source;
        _limit = options.ResolveLimit();
        _errors = options.Errors;
        _callerToken = cancellationToken;
        _metricTags = FanOutMetrics.Tags(_limit.Kind, _limit.Name);
        _maxWorkers = source.KnownCount >= 0 ? Math.Max(1, source.KnownCount) : long.MaxValue;
        _overloadRetries = options.OverloadRetries;
        _rateLimiter = options.RateLimiter;
        _failures = new FailureLog(options.Errors, maxRetainedFailures);
        _itemTimeout = options.ResolvedItemTimeout;
        _hasWindow = hasWindow;
        _wantsSamples = _limit.LearnsFromWork;
        _claimsInline = source.ClaimNeverWaits && _rateLimiter is null && !_hasWindow;
        _lastIndex = source.KnownCount > 0 ? source.FirstIndex + source.KnownCount - 1 : -1;
        _claimTurn = source.ClaimsSynchronously ? null : new SemaphoreSlim(1, 1);
        _permits = new CallPermits(_limit, _cts.Token);
        _scope = new CallScope(_limit, _permits, _overloadRetries);
    }

    /// <summary>The token every body and the async enumerator get.</summary>
    protected CancellationToken Token => _cts.Token;

    protected ErrorMode Errors => _errors;

    /// <summary>How many items the source had; valid once every worker has stopped.</summary>
    protected long ItemCount => _source.KnownCount >= 0 ? _source.KnownCount : _source.ClaimedCount;

    /// <summary>Starts the first worker on the thread pool; it starts the others.</summary>
    public void Start()
    {
        FanOutMetrics.RecordLimit(_limit);
        _limit.EnterCall();
        _permits.ReserveFirstWorker();
        Interlocked.Increment(ref s_workersStarted);

        // Called inside an item of the same limit (a nested call): the call runs its first worker on that item's permit,
        // so it never waits for a second permit of a limit its caller holds (which could deadlock once the items hold them all).
        _permits.TryBorrow();
        _callerRegistration = _callerToken.UnsafeRegister(static run => ((FanOutRun<T>)run!).Stop(), this);

        // The call's activity is current in the context the workers capture, and only there: the caller's stays its own.
        var callerActivity = (Activity?)null;
        if (FanOutTracing.Source.HasListeners())
        {
            _tracing = true;
            callerActivity = Activity.Current;
            _runActivity = FanOutTracing.StartRun(_limit);
        }

        // Every worker runs in the caller's ExecutionContext (AsyncLocal values), captured once here, with the call's scope
        // current in it (and only there: the caller's own context is left as it was).
        _executionContext = _scope.CaptureWorkerContext();
        if (_runActivity is not null)
        {
            Activity.Current = callerActivity;
        }

        QueueWorker();
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

    /// <summary>Called before each claim when the run was built with a window; a stream that yields in order waits here for room in its window. False: stop.</summary>
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

    /// <summary>Records an exception that faults the call and stops it: no new item starts, the token is canceled.</summary>
    private void RecordException(Exception exception)
    {
        _failures.Add(exception);
        Stop();
    }

    /// <summary>
    /// Records what the source threw (GetEnumerator, MoveNext, Dispose). A source failure is a failure like a body's: in
    /// FailFast it cancels the token; in RunAll the items already pulled still run (the source, once it threw, yields no more).
    /// </summary>
    private void RecordSourceFailure(Exception exception)
    {
        _failures.Add(exception);
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
            _failures.AddRange(e.InnerExceptions);
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
        try
        {
            _permits.Complete();
        }
        catch (Exception e)
        {
            _failures.Add(e); // a broken protocol invariant (Debug builds check them here): the call fails with it, it never hangs
        }

        _limit.LeaveCall();
        var canceled = _callerToken.IsCancellationRequested;
        var exceptions = _failures.Collect(CreateRunAllException);
        if (_runActivity is not null)
        {
            FanOutTracing.StopRun(_runActivity, ItemCount, canceled, exceptions); // before the task completes: its awaiter sees it stopped
        }

        Complete(canceled, _callerToken, exceptions);
    }
}
