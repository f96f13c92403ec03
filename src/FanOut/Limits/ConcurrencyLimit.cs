using System.Diagnostics;

using FanOut.Diagnostics;

namespace FanOut;

/// <summary>
/// A budget of items in flight at once. One instance is one budget: pass the same instance to several fan-out calls
/// and the sum of their items in flight stays within <see cref="Current"/> (one budget for one downstream, however many
/// loops call it).
/// </summary>
/// <remarks>
/// <para>
/// The budget is a permit pool. A worker takes a permit with a compare-and-swap while nobody waits (no lock, no allocation),
/// keeps it from one item to the next while nobody else wants it, and hands it to the oldest waiter (FIFO, so calls sharing
/// a limit take turns) when someone does. Only a worker that finds the pool empty allocates: one waiter object.
/// </para>
/// <para>
/// Write a limit of your own by deriving from this class, as <see cref="System.Threading.RateLimiting.RateLimiter"/> is
/// extended: the public members (<see cref="TryAcquire"/>, <see cref="WaitAsync"/>, <see cref="Release"/>,
/// <see cref="RecordStart"/>, <see cref="RecordCompletion(long, ItemOutcome)"/>) call protected virtual ones. A limit whose room is a number
/// overrides <see cref="Current"/> only (and calls <see cref="OnCurrentChanged"/> when it changes); the permit pool does
/// the rest. A limit whose permits live elsewhere (another process, a server) overrides <see cref="TryAcquireCore"/>,
/// <see cref="WaitAsyncCore"/> and <see cref="ReleaseCore"/>, and calls the base versions to keep <see cref="InFlight"/>
/// counted. What else a run needs to know, the limit says once as <see cref="LimitTraits"/> to the base constructor: whether
/// it learns from the work (and then overrides <see cref="OnItemStarting"/> and <see cref="OnItemCompleted(long, ItemOutcome)"/>),
/// whether it rises with nothing completing, whether other processes take its permits. How FanOut's workers use those facts
/// is not the limit's concern. docs/limits.md shows both shapes; every limit in this repository passes one contract suite.
/// </para>
/// </remarks>
public abstract class ConcurrencyLimit
{
    /// <summary>Guards <see cref="_waiters"/>; never held while user code runs (waiters are completed after it is released).</summary>
    private readonly Lock _lock = new();

    /// <summary>Workers waiting for a permit, oldest first.</summary>
    private readonly LinkedList<PermitWaiter> _waiters = new();

    /// <summary>Permits taken: items in flight plus permits a worker holds between two of its items.</summary>
    private int _inFlight;

    /// <summary>Mirror of <see cref="_waiters"/>.Count that the lock-free paths read (see <see cref="Release"/>).</summary>
    private int _waiterCount;

    /// <summary>Fan-out calls running on this limit right now.</summary>
    private int _activeCalls;

    /// <summary>Callers inside <see cref="WaitAsync"/> right now, whatever the limit's own waits are made of (see <see cref="ShouldReturnPermit"/>).</summary>
    private int _waiting;

    /// <summary>This limit's id in limit-state and limit-change events: 0 until one first needs it (<see cref="WatchId"/>).</summary>
    private long _watchId;

    /// <summary>1 while <see cref="WatchedLimits"/> holds this limit.</summary>
    private int _watched;

    /// <summary>Cancellation callbacks that ran for waiters already granted (under <see cref="_lock"/>); stays 0 unless a registration leaked.</summary>
    private long _staleCancellations;

    /// <summary>Creates a limit with an empty permit pool and no <see cref="LimitTraits"/>.</summary>
    protected ConcurrencyLimit()
    {
    }

    /// <summary>Creates a limit with an empty permit pool that says <paramref name="traits"/> about itself.</summary>
    /// <param name="traits">What the limit is: whether it learns from the work, rises unprompted, is shared across processes.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="traits"/> has a bit no <see cref="LimitTraits"/> value names.</exception>
    protected ConcurrencyLimit(LimitTraits traits)
    {
        const LimitTraits all = LimitTraits.LearnsFromWork | LimitTraits.RisesUnprompted | LimitTraits.SharedAcrossProcesses;
        if ((traits & ~all) != 0)
        {
            throw new ArgumentOutOfRangeException(nameof(traits), traits, $"LimitTraits {(int)traits} has unknown bits; valid: a combination of {all}.");
        }

        Traits = traits;
    }

    /// <summary>What the limit said about itself when it was made.</summary>
    public LimitTraits Traits { get; }

    /// <summary>A limit of exactly <paramref name="limit"/> items in flight.</summary>
    /// <param name="limit">The limit, at least 1.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="limit"/> is less than 1.</exception>
    public static ConcurrencyLimit Fixed(int limit)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(limit, 1);
        return new FixedConcurrencyLimit(limit);
    }

    /// <summary>No limit: every item may be in flight at once (the concurrency of <c>Task.WhenAll</c>).</summary>
    /// <remarks>Bodies that complete synchronously still run on at most <see cref="Environment.ProcessorCount"/> workers.</remarks>
    public static ConcurrencyLimit Unbounded { get; } = new UnboundedConcurrencyLimit();

    /// <summary>A limit you change while calls run on it: <see cref="SettableConcurrencyLimit.Set"/>.</summary>
    /// <param name="limit">The limit to start with, at least 1.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="limit"/> is less than 1.</exception>
    public static SettableConcurrencyLimit Settable(int limit) => new(limit);

    /// <summary>Limits per key (host, tenant, entity) under one global cap that racing acquires never exceed.</summary>
    /// <typeparam name="TKey">The partition key.</typeparam>
    /// <param name="globalLimit">Permits all keys hold together, at least 1.</param>
    /// <param name="limitPerKey">Creates a key's limit the first time the key is used (e.g. <c>_ =&gt; ConcurrencyLimit.Adaptive()</c>); called again for a key dropped while idle.</param>
    /// <param name="options">How many idle keys are kept and named in metrics; <see langword="null"/> for the defaults.</param>
    /// <returns>The partitioned limit: take a key's limit with <see cref="PartitionedConcurrencyLimit{TKey}.ForKey"/>.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="globalLimit"/> is less than 1, or an option is out of range.</exception>
    public static PartitionedConcurrencyLimit<TKey> Partitioned<TKey>(int globalLimit, Func<TKey, ConcurrencyLimit> limitPerKey, PartitionedLimitOptions? options = null)
        where TKey : notnull =>
        new(globalLimit, limitPerKey, options ?? new PartitionedLimitOptions());

    /// <summary>A limit that finds, while the work runs, the concurrency the work can afford.</summary>
    /// <param name="options">Its bounds and signals; <see langword="null"/> for the documented defaults.</param>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of its documented range.</exception>
    public static ConcurrencyLimit Adaptive(AdaptiveLimitOptions? options = null) =>
        new AdaptiveConcurrencyLimit(options ?? new AdaptiveLimitOptions());

    /// <summary>The limit right now.</summary>
    public abstract int Current { get; }

    /// <summary>The highest value <see cref="Current"/> has had (for a fixed limit, the limit itself).</summary>
    public virtual int Peak => Current;

    /// <summary>Permits taken right now, by every call that shares this limit. Never above <see cref="Current"/> once a decrease has drained.</summary>
    /// <remarks>A limit whose permits are another limit's (a view) reports that limit's count.</remarks>
    public virtual int InFlight => Volatile.Read(ref _inFlight);

    /// <summary>The kind of limit, as the <c>fanout.limit.kind</c> metric tag shows it: <c>fixed</c>, <c>unbounded</c> or <c>adaptive</c>.</summary>
    public abstract string Kind { get; }

    /// <summary>
    /// The name metrics (tag <c>fanout.limit.name</c>), the <c>FanOut</c> events and <c>fanout watch</c> tell this limit by;
    /// <see langword="null"/> (the default): none, and they show its <see cref="Kind"/>.
    /// </summary>
    /// <value>An adaptive limit's <see cref="AdaptiveLimitOptions.Name"/>; a Redis limit's <c>redis:</c> and key. Names are tag values: keep them few.</value>
    public virtual string? Name => null;

    /// <summary>How many workers a call starts for bodies that complete synchronously (more would only time-slice the cores).</summary>
    /// <value>By default <see cref="Current"/>; an unbounded or adaptive limit says <see cref="Environment.ProcessorCount"/> or less.</value>
    internal virtual int WorkerHint => Current;

    /// <summary>The highest <see cref="Current"/> can ever be; sizes stream buffers.</summary>
    /// <value>By default <see cref="Current"/>: override it in a limit whose <see cref="Current"/> can rise.</value>
    public virtual int MaxCurrent => Current;

    /// <summary>
    /// True while <see cref="Current"/> may rise with nothing completing (<see cref="LimitTraits.RisesUnprompted"/>; an
    /// adaptive limit while it ramps): a call then keeps a worker waiting for the new room. Once items complete, the workers
    /// that finish them find any new room themselves.
    /// </summary>
    internal virtual bool MayRiseUnprompted => (Traits & LimitTraits.RisesUnprompted) != 0;

    /// <summary>
    /// True when someone besides the asking call may want this limit's permits: another call running on the same instance
    /// (or, for a distributed limit, another process). A call on a limit it alone uses takes a permit before it pulls an
    /// item (exactly as many items pulled as permits held, as Parallel.ForEachAsync); a call on a shared limit pulls first
    /// so that it never holds a permit others could use while its source is quiet.
    /// </summary>
    internal virtual bool IsShared => (Traits & LimitTraits.SharedAcrossProcesses) != 0 || Volatile.Read(ref _activeCalls) > 1;

    /// <summary>Counts a call that starts running on this limit (see <see cref="IsShared"/>).</summary>
    internal void EnterCall()
    {
        Interlocked.Increment(ref _activeCalls);
        NoteUse();
    }

    /// <summary>Registers this limit with <see cref="WatchedLimits"/> when a session watches limit states and it is not held yet.</summary>
    internal void NoteUse()
    {
        if (Volatile.Read(ref _watched) == 0 && FanOutEventSource.Log.IsWatching)
        {
            WatchedLimits.Track(this);
        }
    }

    /// <summary>Marks this limit watched; false if it already was (under the registry's lock).</summary>
    internal bool TryBeginWatch()
    {
        if (_watched != 0)
        {
            return false;
        }

        _ = WatchId;
        Volatile.Write(ref _watched, 1);
        return true;
    }

    /// <summary>Marks this limit no longer watched (under the registry's lock).</summary>
    internal void EndWatch() => Volatile.Write(ref _watched, 0);

    /// <summary>This limit's id in limit-state and limit-change events, taken the first time either needs it.</summary>
    internal long WatchId
    {
        get
        {
            var id = Volatile.Read(ref _watchId);
            return id != 0 ? id : TakeWatchId();
        }
    }

    private long TakeWatchId()
    {
        Interlocked.CompareExchange(ref _watchId, WatchedLimits.NextId(), 0);
        return Volatile.Read(ref _watchId);
    }


    /// <summary>The state a watcher sees; a limit that times its items adds latency, baseline and overloads.</summary>
    internal virtual LimitStateReading ReadState() => new(Current, InFlight, Waiting, LatencyMs: -1, BaselineMs: 0, Overloads: 0, Pauses: 0, Changes: 0);

    /// <summary>Counts a call that stopped running on this limit.</summary>
    internal void LeaveCall() => Interlocked.Decrement(ref _activeCalls);

    /// <summary>Whether <see cref="OnItemCompleted(long, ItemOutcome)"/> needs a start timestamp for every item; constant for an instance (a call reads it once).</summary>
    /// <value><see cref="LimitTraits.LearnsFromWork"/> (or the older <see cref="WantsSamples"/>); without it a run skips <see cref="RecordStart"/> and <see cref="RecordCompletion(long, ItemOutcome)"/> when no metrics listen.</value>
#pragma warning disable CS0618 // the older way of saying it is still honoured
    internal virtual bool LearnsFromWork => (Traits & LimitTraits.LearnsFromWork) != 0 || WantsSamples;
#pragma warning restore CS0618

    /// <summary>The older way to say <see cref="LimitTraits.LearnsFromWork"/>: still honoured, so a limit that overrides it keeps compiling and learning.</summary>
    [Obsolete("Pass LimitTraits.LearnsFromWork to the ConcurrencyLimit(LimitTraits) constructor instead.")]
    [System.ComponentModel.EditorBrowsable(System.ComponentModel.EditorBrowsableState.Never)]
    protected virtual bool WantsSamples => false;

    /// <summary>True when a permit could be taken right now.</summary>
    internal bool HasRoom => InFlight < Current;

    /// <summary>
    /// True when a worker should give its permit back between items rather than keep it: someone waits for one, or
    /// the limit dropped below the permits taken.
    /// </summary>
    /// <value>
    /// By default: someone is inside <see cref="WaitAsync"/> (counted at the public method, so it holds for a limit whose
    /// permits live elsewhere as for the built-in pool, and for every <see cref="ConcurrencyLimitRateLimiterExtensions.AsRateLimiter"/>
    /// lease waiting), or <see cref="InFlight"/> is above <see cref="Current"/>; always for a limit
    /// <see cref="LimitTraits.SharedAcrossProcesses"/>, whose other takers cannot be seen waiting from here.
    /// </value>
    internal virtual bool ShouldReturnPermit => (Traits & LimitTraits.SharedAcrossProcesses) != 0 || Volatile.Read(ref _waiting) != 0 || InFlight > Current;

    /// <summary>Callers inside <see cref="WaitAsync"/> right now (for tests and watchers).</summary>
    internal int Waiting => Volatile.Read(ref _waiting);

    /// <summary>
    /// The clock item durations are measured with (<see cref="RecordStart"/>'s timestamps) and the run waits with between
    /// attempts of an overloaded item. An adaptive limit uses the one in its options.
    /// </summary>
    public virtual TimeProvider TimeProvider => TimeProvider.System;

    /// <summary>Reads <see cref="TimeProvider"/>'s clock; has no effect on the limit.</summary>
    internal long GetTimestamp() => TimeProvider.GetTimestamp();

    /// <summary>
    /// True when <paramref name="failure"/> means the downstream was overloaded and did not process the item, so the run may
    /// run it again. Only adaptive limits say so by default (their <see cref="AdaptiveLimitOptions.IsOverload"/>): with a
    /// fixed limit the caller chose the concurrency, and a failure is a failure. May run user code, and throw.
    /// </summary>
    /// <param name="failure">What the item's body threw.</param>
    public virtual bool IsOverload(Exception failure) => false;

    /// <summary>
    /// Tells the limit that an attempt of an item starts (its permit taken) and returns the timestamp to pass to
    /// <see cref="RecordCompletion(long, ItemOutcome)"/>. A fan-out call does this for every attempt when the limit <see cref="LimitTraits.LearnsFromWork"/>; code that
    /// takes permits itself (an HTTP handler, a <see cref="System.Threading.RateLimiting.RateLimiter"/> lease) does the same.
    /// </summary>
    public long RecordStart() => OnItemStarting();

    /// <summary>Tells the limit how an attempt that <see cref="RecordStart"/> saw start has ended (adaptive limits learn from it).</summary>
    /// <param name="startTimestamp">What <see cref="RecordStart"/> returned for this attempt.</param>
    /// <param name="outcome">How it ended.</param>
    public void RecordCompletion(long startTimestamp, ItemOutcome outcome) => OnItemCompleted(startTimestamp, outcome);

    /// <summary>
    /// Tells the limit how an attempt that <see cref="RecordStart"/> saw start has ended, with the pause the downstream asked
    /// for (an HTTP <c>Retry-After</c>, <see cref="OverloadedException.RetryAfter"/>): an adaptive limit grants no permit
    /// until it has passed (see docs/adaptive.md); fixed and settable limits ignore the hint.
    /// </summary>
    /// <param name="startTimestamp">What <see cref="RecordStart"/> returned for this attempt.</param>
    /// <param name="outcome">How it ended; the hint counts only with <see cref="ItemOutcome.Overloaded"/>.</param>
    /// <param name="retryAfter">The downstream's Retry-After, or <see langword="null"/> when it gave none.</param>
    public void RecordCompletion(long startTimestamp, ItemOutcome outcome, TimeSpan? retryAfter) => OnItemCompleted(startTimestamp, outcome, retryAfter);

    /// <summary>Called once as each attempt of an item starts (its permit taken); returns its start timestamp.</summary>
    /// <remarks>The default reads <see cref="TimeProvider"/>.</remarks>
    protected virtual long OnItemStarting() => TimeProvider.GetTimestamp();

    /// <summary>Feeds one finished attempt to the limit (adaptive limits learn from it). Must not block or throw.</summary>
    /// <param name="startTimestamp">When the attempt started, from <see cref="OnItemStarting"/> (ticks of <see cref="TimeProvider"/>).</param>
    /// <param name="outcome">How it ended, judged once by the caller (the overload test is user code, and may throw).</param>
    protected virtual void OnItemCompleted(long startTimestamp, ItemOutcome outcome)
    {
    }

    /// <summary>Feeds one finished attempt and the downstream's Retry-After hint to the limit. Must not block or throw.</summary>
    /// <param name="startTimestamp">When the attempt started, from <see cref="OnItemStarting"/> (ticks of <see cref="TimeProvider"/>).</param>
    /// <param name="outcome">How it ended, judged once by the caller.</param>
    /// <param name="retryAfter">The pause the downstream asked for, or <see langword="null"/>.</param>
    /// <remarks>
    /// The default ignores the hint and calls <see cref="OnItemCompleted(long, ItemOutcome)"/>: with a fixed limit the caller
    /// chose the concurrency, and the run's items already wait out their Retry-After without a permit. A limit that honours
    /// the pause (the adaptive one) overrides this, and shows a <see cref="Current"/> of 0 until the pause has passed.
    /// </remarks>
    protected virtual void OnItemCompleted(long startTimestamp, ItemOutcome outcome, TimeSpan? retryAfter) => OnItemCompleted(startTimestamp, outcome);

    /// <summary>Cancellation callbacks that found their waiter already granted: registrations a grant should have removed.</summary>
    internal long StaleCancellations
    {
        get
        {
            lock (_lock)
            {
                return _staleCancellations;
            }
        }
    }

    /// <summary>Takes a permit without waiting. Fails while others wait, so that waiters are served first.</summary>
    /// <returns>True when a permit was taken: give it back with <see cref="Release"/>.</returns>
    public bool TryAcquire() => TryAcquireCore();

    /// <summary>Waits for a permit, oldest waiter first.</summary>
    /// <param name="cancellationToken">Stops the wait; the task then returns false (it does not throw: waits are canceled on the hot path).</param>
    /// <returns>True when a permit was taken (give it back with <see cref="Release"/>); false when <paramref name="cancellationToken"/> was canceled first.</returns>
    public Task<bool> WaitAsync(CancellationToken cancellationToken = default)
    {
        // Counted here, at the one public door, so the protocol learns that someone waits whatever the limit's waits are
        // made of (a workers of a fan-out call then give their permits back between items: ShouldReturnPermit).
        Interlocked.Increment(ref _waiting);
        NoteUse();
        Task<bool> wait;
        try
        {
            wait = WaitAsyncCore(cancellationToken);
        }
        catch
        {
            Interlocked.Decrement(ref _waiting);
            throw;
        }

        if (wait.IsCompleted)
        {
            Interlocked.Decrement(ref _waiting);
            return wait;
        }

        return Counted(wait);

        async Task<bool> Counted(Task<bool> wait)
        {
            try
            {
                return await wait.ConfigureAwait(false);
            }
            finally
            {
                Interlocked.Decrement(ref _waiting);
            }
        }
    }

    /// <summary>Gives back a permit that <see cref="TryAcquire"/> or <see cref="WaitAsync"/> took, handing it to the oldest waiter if there is one.</summary>
    public void Release() => ReleaseCore();

    /// <summary>Takes a permit from the pool without waiting. Fails while others wait, so that waiters are served first.</summary>
    protected virtual bool TryAcquireCore() => Volatile.Read(ref _waiterCount) == 0 && TryTakePermit();

    /// <summary>Waits for a permit from the pool; the task's result is false if <paramref name="cancellationToken"/> was canceled first.</summary>
    /// <param name="cancellationToken">Stops the wait.</param>
    protected virtual Task<bool> WaitAsyncCore(CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return PermitWaiter.s_false;
        }

        var waiter = new PermitWaiter(this);
        lock (_lock)
        {
            AssertInvariants();

            // Announce the waiter before the last look at the count: a Release that decrements after our look
            // then sees _waiterCount != 0 and drains; one that decremented before it lets our look succeed.
            Interlocked.Increment(ref _waiterCount);
            if (TryTakePermit())
            {
                Interlocked.Decrement(ref _waiterCount);
                return PermitWaiter.s_true;
            }

            waiter.Node = _waiters.AddLast(waiter);
        }

        waiter.Register(cancellationToken);
        return waiter.Task;
    }

    /// <summary>Gives a permit back to the pool, handing it to the oldest waiter if there is one.</summary>
    protected virtual void ReleaseCore()
    {
        Interlocked.Decrement(ref _inFlight);

        // Full fence above; see WaitAsync for the other half of this handshake.
        if (Volatile.Read(ref _waiterCount) != 0)
        {
            Drain();
        }
    }

    /// <summary>
    /// Called by a limit whose <see cref="Current"/> changed: records it on the <c>fanout.limit.current</c> gauge and wakes the
    /// waiters any new room admits. A decrease needs nothing more: workers give back permits above the new limit as their
    /// items finish, and no permit is granted until <see cref="InFlight"/> is below it.
    /// </summary>
    protected void OnCurrentChanged()
    {
        FanOutMetrics.RecordLimit(this);
        NoteUse();
        if (Volatile.Read(ref _waiterCount) != 0)
        {
            Drain();
        }
    }

    /// <summary>Removes a waiter whose token was canceled before it got a permit.</summary>
    internal bool TryRemove(PermitWaiter waiter)
    {
        lock (_lock)
        {
            AssertInvariants();
            if (waiter.Node?.List is null)
            {
                // Already granted: its registration should have been removed with the grant (a leak if this counts up).
                _staleCancellations++;
                return false;
            }

            _waiters.Remove(waiter.Node);
            Interlocked.Decrement(ref _waiterCount);
            return true;
        }
    }

    /// <summary>
    /// Takes a permit if <see cref="InFlight"/> is below <see cref="Current"/>. <see cref="Current"/> is read again after the
    /// compare-and-swap: a decrease that landed between the first read and the swap (a <c>Set(1)</c> from 3) undoes the take,
    /// so no permit is granted above a limit lowered before the grant (systematic testing found 2-4 bodies under a limit
    /// lowered to 1, about once in 100,000 schedules).
    /// </summary>
    private bool TryTakePermit()
    {
        while (true)
        {
            var current = Current;
            var seen = Volatile.Read(ref _inFlight);
            if (seen >= current)
            {
                return false;
            }

            if (Interlocked.CompareExchange(ref _inFlight, seen + 1, seen) != seen)
            {
                continue;
            }

            if (seen < Current)
            {
                return true;
            }

            // Lowered while we took it: give it back and look again (room may remain under the new limit, and a Release
            // that ran meanwhile may have found none to hand to a waiter).
            Interlocked.Decrement(ref _inFlight);
        }
    }

    private void Drain()
    {
        PermitWaiter? granted = null;
        lock (_lock)
        {
            AssertInvariants();
            while (_waiters.First is { } node && TryTakePermit())
            {
                _waiters.RemoveFirst();
                Interlocked.Decrement(ref _waiterCount);
                node.Value.NextGranted = granted;
                granted = node.Value;
            }
        }

        // Complete outside the lock: completing a task may run code (continuations are asynchronous, but stay safe).
        while (granted is not null)
        {
            var next = granted.NextGranted;
            granted.Grant();
            granted = next;
        }
    }

    [Conditional("DEBUG")]
    private void AssertInvariants()
    {
        Debug.Assert(_lock.IsHeldByCurrentThread);
        Debug.Assert(_waiters.Count == Volatile.Read(ref _waiterCount) || _waiters.Count + 1 == Volatile.Read(ref _waiterCount));
        Debug.Assert(Volatile.Read(ref _inFlight) >= 0);
    }
}
