using System.Diagnostics;

namespace FanOut.Redis.Adaptive;

/// <summary>
/// One process's claim on the adaptive fleet budget: the core's adaptive law (<see cref="AdaptiveLaw"/>, the law of every
/// place, docs/adaptive.md) over this process's own answers decides how many leases it may hold, and the budget loop
/// tells Redis, where the fleet budget is the sum of the claims (<see cref="BudgetScripts.Claim"/>). No round trip happens here.
/// </summary>
/// <remarks>
/// <para>Until Redis answered the join (<see cref="BudgetRequest.Join"/>) the claim is 0 and no lease is asked for: the
/// fleet's first contact is bounded by its initial budget, shared between the processes that start together.</para>
/// <para>A retry-after pauses the whole fleet (<see cref="FleetPause"/>, by the server's clock); as the core limit does, the
/// first overload of a storm goes to the law (one back-off) and those of attempts started before it do not (a pause is not a
/// capacity signal).</para>
/// </remarks>
internal sealed class FleetClaim
{
    private readonly AdaptiveLimitOptions _lawOptions;
    private readonly TimeProvider _time;
    private readonly Func<Exception, bool> _isOverload;
    private readonly long _maxPauseMs;

    /// <summary>Guards the law and the pending requests; never held while code outside this class runs.</summary>
    private readonly Lock _lock = new();

    /// <summary>The law over this process's answers; null until the join was answered.</summary>
    private AdaptiveLaw? _law;

    /// <summary>True when the claim changed since it was last sent.</summary>
    private bool _claimPending;

    private long _pausePendingMs;

    private readonly Leases.FleetState _fleet;

    /// <summary>The generation this process knew when its law last cut on a "no" of its own, to send (-1: none pending).</summary>
    private long _overloadGeneration = -1;

    /// <summary>When this process's law last cut on a "no", its own or the fleet's (a timestamp).</summary>
    private long _lastCutAt = long.MinValue;

    /// <summary>The smoothed latency of this process's successes (ticks; the newest weighs 1/8): how long a back-off takes to show.</summary>
    private long _window;

    private bool _sampled;

    /// <summary>Leases to park as items end: one per overloaded attempt.</summary>
    private int _toPark;

    /// <summary>Parked leases' release times (timestamps), oldest first; guarded by <see cref="_lock"/>.</summary>
    private readonly Queue<long> _parked = new();

    /// <summary>True while this process's own "no" is on its way to Redis: the generation it raises is its own.</summary>
    private bool _overloadSending;

    /// <summary>When this process's last storm began (its first hinted overload): overloads of attempts started before it belong to it.</summary>
    private long _stormStart = long.MinValue;

    public FleetClaim(AdaptiveBudgetOptions options, TimeProvider time, WakeSignal wake, string? name, Leases.FleetState fleet)
    {
        _time = time;
        _fleet = fleet;
        _window = (long)(0.01 * time.TimestampFrequency); // until the first success: 10 ms
        Wake = wake;
        _isOverload = options.IsOverload ?? AdaptiveLimitOptions.IsOverloadByDefault;
        _maxPauseMs = (long)options.MaxPause.TotalMilliseconds;
        _lawOptions = new AdaptiveLimitOptions
        {
            MinLimit = 1,
            MaxLimit = options.MaxBudget,
            InitialLimit = 1,
            BackoffRatio = options.BackoffRatio,
            TimeProvider = time,
            Name = name is null ? null : name + ":claim",
        };
    }

    /// <summary>Wakes the budget loop: a claim or a pause is pending.</summary>
    public WakeSignal Wake { get; }

    /// <summary>The leases this process may hold (0 until the fleet answered its join).</summary>
    public int Limit => Volatile.Read(ref _law)?.Limit ?? 0;

    /// <summary>True once Redis answered the join.</summary>
    public bool Joined => Volatile.Read(ref _law) is not null;

    /// <summary>The overload test (<see cref="AdaptiveBudgetOptions.IsOverload"/>). Runs user code, which may throw.</summary>
    public bool IsOverload(Exception failure) => _isOverload(failure);

    /// <summary>Learns from one finished attempt (the limit's completion hook): never blocks, never throws.</summary>
    /// <param name="startTimestamp">When the attempt started.</param>
    /// <param name="outcome">How it ended.</param>
    /// <param name="retryAfter">The downstream's retry-after for an overloaded attempt: a fleet pause of that long (at most <see cref="AdaptiveBudgetOptions.MaxPause"/>).</param>
    /// <param name="inFlight">This process's items in flight, this one included.</param>
    public void OnCompleted(long startTimestamp, ItemOutcome outcome, TimeSpan? retryAfter, int inFlight)
    {
        if (outcome == ItemOutcome.Canceled)
        {
            return; // a canceled run's latency describes the cancellation, not the downstream
        }

        var now = _time.GetTimestamp();
        var overloaded = outcome == ItemOutcome.Overloaded;
        if (overloaded)
        {
            Interlocked.Increment(ref _toPark);
        }

        var hinted = overloaded && _maxPauseMs > 0 && retryAfter is { } hint && hint > TimeSpan.Zero;
        var law = (AdaptiveLaw?)null;
        lock (_lock)
        {
            AssertInvariants();
            if (hinted)
            {
                _pausePendingMs = Math.Max(_pausePendingMs, (long)Math.Ceiling(Math.Min(retryAfter!.Value.TotalMilliseconds, _maxPauseMs)));
            }

            // Before the join nothing was claimed; an overload of an attempt started before this storm began is the storm's.
            if (_law is not null && !(overloaded && startTimestamp <= _stormStart))
            {
                if (hinted)
                {
                    _stormStart = now;
                }

                law = _law;
            }
        }

        // The law has its own lock and publishes its changes outside it.
        var reason = law?.OnAnswer(startTimestamp, outcome, inFlight).Reason ?? LimitChangeReason.Hold;
        lock (_lock)
        {
            AssertInvariants();
            if (outcome == ItemOutcome.Succeeded)
            {
                var latency = now - startTimestamp;
                _window = _sampled ? _window + ((latency - _window) / 8) : latency;
                _sampled = true;
            }

            if (law is not null && overloaded && startTimestamp >= _lastCutAt)
            {
                // A "no" to an attempt started since the last back-off is the fleet's (BudgetScripts.Claim): the others back off
                // with it, even when this law holds (at its least, a "no" cuts nothing here, and the cap is the others').
                _lastCutAt = now;
                _overloadGeneration = _fleet.Generation;
            }

            _claimPending |= reason != LimitChangeReason.Hold;
        }

        if (reason != LimitChangeReason.Hold || hinted || overloaded)
        {
            Wake.Set();
        }
    }

    /// <summary>
    /// Another process's law cut on a "no" (the budget's generation rose): this law backs off as if it had seen it, at its
    /// own limit, unless it cut on a "no" within a window (it saw the same burst).
    /// </summary>
    /// <param name="inFlight">This process's items in flight.</param>
    public void OnFleetOverload(int inFlight)
    {
        var now = _time.GetTimestamp();
        AdaptiveLaw? law;
        lock (_lock)
        {
            AssertInvariants();
            law = _law;
            if (law is null || _overloadSending || _overloadGeneration >= 0 || (_lastCutAt != long.MinValue && now - _lastCutAt < Math.Max(_window, 1)))
            {
                return;
            }

            _lastCutAt = now;
        }

        // A "no" at the level this process runs at: the law's back-off, once (an item started now is not stale).
        if (law.OnAnswer(now, ItemOutcome.Overloaded, Math.Max(Math.Max(inFlight, law.Limit), 1)).Reason != LimitChangeReason.Hold)
        {
            lock (_lock)
            {
                AssertInvariants();
                _claimPending = true;
            }

            Wake.Set();
        }
    }

    /// <summary>The next request for Redis, if any: the join first, then the claim and any pause.</summary>
    /// <param name="refresh">Send the claim even if it did not change (it expires in Redis a lease time after it was last sent).</param>
    public BudgetRequest? TakeRequest(bool refresh)
    {
        lock (_lock)
        {
            AssertInvariants();
            if (_law is not null && !_claimPending && _pausePendingMs == 0 && _overloadGeneration < 0 && !refresh)
            {
                return null;
            }

            var request = new BudgetRequest(_law is null ? BudgetRequest.Join : _law.Limit, _pausePendingMs, _overloadGeneration, Math.Max(1, (long)Math.Ceiling(_window * 1000.0 / _time.TimestampFrequency)));
            _claimPending = false;
            _pausePendingMs = 0;
            _overloadSending = request.OverloadGeneration >= 0;
            _overloadGeneration = -1;
            return request;
        }
    }

    /// <summary>Takes in the script's answer: the join's initial claim starts the law.</summary>
    /// <returns>True when this answer made this process's limit rise (the waiters here may try Redis again).</returns>
    public bool OnReply(BudgetRequest request, BudgetReply reply)
    {
        lock (_lock)
        {
            AssertInvariants();
            _overloadSending = false;
            if (request.Claim != BudgetRequest.Join || _law is not null)
            {
                return false;
            }

            Volatile.Write(ref _law, new AdaptiveLaw(_lawOptions with { InitialLimit = Math.Clamp(reply.Claim, 1, _lawOptions.MaxLimit) }));
            return true;
        }
    }

    /// <summary>
    /// True (once per overloaded attempt) when a finished item's lease should sit out one window here instead of going to
    /// the next item: against a full downstream that says no at once, the item's retry would otherwise be refused again
    /// and again within one window, one "no" per back-off of a millisecond (19 in a row at a cap of 5 before this rule).
    /// </summary>
    public bool TryPark()
    {
        var owed = Volatile.Read(ref _toPark);
        while (owed > 0)
        {
            var seen = Interlocked.CompareExchange(ref _toPark, owed - 1, owed);
            if (seen == owed)
            {
                lock (_lock)
                {
                    AssertInvariants();
                    _parked.Enqueue(_time.GetTimestamp() + Math.Max(_window, 1));
                }

                Wake.Set();
                return true;
            }

            owed = seen;
        }

        return false;
    }

    /// <summary>Counts the parked leases whose window is over (the caller stocks them) and says how long until the next one is.</summary>
    public int TakeUnparked(out TimeSpan? next)
    {
        var now = _time.GetTimestamp();
        var due = 0;
        next = null;
        lock (_lock)
        {
            AssertInvariants();
            while (_parked.TryPeek(out var at))
            {
                if (at > now)
                {
                    next = _time.GetElapsedTime(now, at);
                    break;
                }

                _parked.Dequeue();
                due++;
            }
        }

        return due;
    }

    /// <summary>A request that failed (Redis unreachable): keep its pause, and its claim, for the next try.</summary>
    public void OnRequestFailed(BudgetRequest request)
    {
        lock (_lock)
        {
            AssertInvariants();
            _pausePendingMs = Math.Max(_pausePendingMs, request.PauseMs);
            _claimPending |= _law is not null;
            _overloadSending = false;
            if (request.OverloadGeneration >= 0 && _overloadGeneration < 0)
            {
                _overloadGeneration = request.OverloadGeneration;
            }
        }
    }

    [Conditional("DEBUG")]
    private void AssertInvariants()
    {
        Debug.Assert(_lock.IsHeldByCurrentThread);
    }
}
