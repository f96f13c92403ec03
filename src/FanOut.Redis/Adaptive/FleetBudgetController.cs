using System.Diagnostics;

using FanOut.Redis.Leases;

namespace FanOut.Redis.Adaptive;

/// <summary>
/// One process's half of the adaptive fleet budget: turns its items' outcomes into requests for the budget loop (a
/// decrease, a pause, growth evidence), and sheds its leases when the budget falls. No round trip happens here.
/// </summary>
/// <remarks>
/// <para>The latency window is the smoothed duration of this process's successful items (a moving average weighing the
/// newest 1/8): the time it takes a change of the budget to show in the outcomes. Overloaded items are left out: a
/// rejection comes back at once and says nothing about how long the work takes.</para>
/// <para>An overload signal is sent once per budget generation, and only for an item that started a window or more after
/// this process learned of the current generation: the items already in flight when the budget fell, and those started
/// while the fleet's leases drained to the new budget, bring back the 429s of the old budget, and must not cut it again. So one burst of 429s is one decrease, fleet-wide (the script checks the generation
/// too, for signals of several processes that crossed).</para>
/// <para>First contact is bounded by evidence, as the core law's (TCP's slow start grows per acknowledgement): the fleet
/// starts at a small <see cref="AdaptiveBudgetOptions.InitialBudget"/>, growth is asked only on an answered item (no timer
/// grows anything), and only on one that <b>started after this process learned the current budget</b>: an item started
/// under the budget before the last growth says nothing about the grown one, so the budget grows at most once per round
/// trip at that budget, however many items answer. The latency window starts at the first answer's duration (not an
/// average dragged toward a 10 ms guess). An overload ends the ramp (the script's slow start ends with the first decrease)
/// and no growth is asked within a window of one.</para>
/// <para>Growth evidence is sent at most once per window, after a success, while workers here or in another process
/// (a <c>w:</c> message or a script's answer says so) wait for a permit (the fleet would use more) and the fleet is not
/// paused; the script adds the fleet-wide condition (leases in use near the budget). Counting the other processes'
/// waiters matters at the start: the first process to ask takes the whole initial budget before the others register,
/// its fair share is then the whole budget until its next script answer (a renewal, a third of the lease time later),
/// and its own call never waits (it starts no worker beyond the budget), so without them nobody asked for growth.</para>
/// </remarks>
internal sealed class FleetBudgetController
{
    /// <summary>The window before any item has completed.</summary>
    private static readonly TimeSpan s_initialWindow = TimeSpan.FromMilliseconds(10);

    private readonly AdaptiveBudgetOptions _options;
    private readonly TimeProvider _time;
    private readonly LocalLeases _leases;
    private readonly FleetState _fleet;
    private readonly Func<Exception, bool> _isOverload;
    private readonly long _maxPauseMs;

    /// <summary>Guards the pending requests; never held while code outside this class runs.</summary>
    private readonly Lock _lock = new();

    /// <summary>The smoothed latency of successful items, in ticks of the options' clock (a lost race loses one sample).</summary>
    private long _windowTicks;

    /// <summary>True until the first successful item set the window.</summary>
    private int _noSample = 1;

    /// <summary>When this process learned the current budget (a timestamp): growth evidence comes from items started after it.</summary>
    private long _budgetSeenAt;

    /// <summary>When growth evidence was last asked for (a timestamp).</summary>
    private long _grewAskedAt;

    /// <summary>The generation a decrease was last asked for; -1 when none since a failed request.</summary>
    private long _decreaseAskedFor = -1;

    private bool _decreasePending;

    /// <summary>The fleet budget this process knew when the pending decrease's overload came back.</summary>
    private int _decreaseSeenBudget;
    private bool _growthPending;
    private long _pausePendingMs;

    /// <summary>Leases to hand back as items end, after the budget fell (this process's part of the decrease).</summary>
    private int _toShed;

    /// <summary>Leases to park as items end: one per overloaded attempt.</summary>
    private int _toPark;

    /// <summary>When an overloaded attempt last ended here (a timestamp): no growth is asked for within a window of it.</summary>
    private long _overloadedAt;

    /// <summary>Parked leases' release times (timestamps), oldest first; guarded by <see cref="_lock"/>.</summary>
    private readonly Queue<long> _parked = new();

    public FleetBudgetController(AdaptiveBudgetOptions options, TimeProvider time, LocalLeases leases, FleetState fleet, WakeSignal wake)
    {
        _options = options;
        _time = time;
        _leases = leases;
        _fleet = fleet;
        Wake = wake;
        _isOverload = options.IsOverload ?? AdaptiveLimitOptions.IsOverloadByDefault;
        _maxPauseMs = (long)options.MaxPause.TotalMilliseconds;
        _windowTicks = (long)(s_initialWindow.TotalSeconds * time.TimestampFrequency);
        _grewAskedAt = time.GetTimestamp() - _windowTicks; // the first success may ask at once
        _overloadedAt = _grewAskedAt;
        _budgetSeenAt = long.MinValue; // the initial budget: any item is evidence about it
        fleet.BudgetChanged = OnBudgetChanged;
    }

    /// <summary>Wakes the budget loop: a request is pending, or the pause moved.</summary>
    public WakeSignal Wake { get; }

    /// <summary>The latency window: the least time between two changes of the budget this process asks for.</summary>
    public TimeSpan Window => TimeSpan.FromSeconds(Volatile.Read(ref _windowTicks) / (double)_time.TimestampFrequency);

    /// <summary>The overload test (<see cref="AdaptiveBudgetOptions.IsOverload"/>). Runs user code, which may throw.</summary>
    /// <remarks>
    /// A judgement only: the retry-after hint reaches the fleet pause through the completion (<see cref="OnCompleted"/>), the
    /// one path every source takes (the run's completion, a <see cref="ConcurrencyLease"/>, a caller's own
    /// <see cref="ConcurrencyLimit.RecordCompletion(long, ItemOutcome, TimeSpan?)"/>).
    /// </remarks>
    public bool IsOverload(Exception failure) => _isOverload(failure);

    /// <summary>Learns from one finished attempt (the limit's completion hook): never blocks, never throws.</summary>
    /// <param name="startTimestamp">When the attempt started.</param>
    /// <param name="outcome">How it ended.</param>
    /// <param name="retryAfter">
    /// The downstream's retry-after for an overloaded attempt: a fleet pause of that long (at most
    /// <see cref="AdaptiveBudgetOptions.MaxPause"/>), asked for whether or not the overload also asks a decrease (the
    /// attempts of one storm pause the fleet to the latest end any of them asked, and decrease the budget once).
    /// </param>
    public void OnCompleted(long startTimestamp, ItemOutcome outcome, TimeSpan? retryAfter = null)
    {
        if (outcome == ItemOutcome.Overloaded && _maxPauseMs > 0 && retryAfter is { } hint && hint > TimeSpan.Zero)
        {
            var ms = (long)Math.Ceiling(Math.Min(hint.TotalMilliseconds, _maxPauseMs));
            lock (_lock)
            {
                AssertInvariants();
                _pausePendingMs = Math.Max(_pausePendingMs, ms);
            }

            Wake.Set();
        }

        if (outcome == ItemOutcome.Succeeded)
        {
            var now = _time.GetTimestamp();
            var window = Volatile.Read(ref _windowTicks);
            window = Interlocked.Exchange(ref _noSample, 0) == 1 ? now - startTimestamp : window + ((now - startTimestamp - window) / 8);
            Volatile.Write(ref _windowTicks, window);
            // Demand is the fleet's: a process holding every lease has no waiter of its own (its call starts no worker
            // beyond the budget), while the others wait for its leases; it alone can bring the evidence. The evidence
            // must be about the current budget: an item started before this process learned it does not count.
            if ((_leases.WaiterCount > 0 || _fleet.OthersWaiting) && startTimestamp >= Interlocked.Read(ref _budgetSeenAt)
                && now - Volatile.Read(ref _grewAskedAt) >= window && now - Volatile.Read(ref _overloadedAt) >= window
                && _fleet.Budget < _options.MaxBudget)
            {
                Volatile.Write(ref _grewAskedAt, now);
                lock (_lock)
                {
                    AssertInvariants();
                    _growthPending = true;
                }

                Wake.Set();
            }
        }
        else if (outcome == ItemOutcome.Overloaded)
        {
            Volatile.Write(ref _overloadedAt, _time.GetTimestamp());
            Interlocked.Increment(ref _toPark);
            if (startTimestamp < _fleet.GenerationSeenAt + Volatile.Read(ref _windowTicks))
            {
                return; // started before the last decrease had drained: old news
            }

            var generation = _fleet.Generation;
            lock (_lock)
            {
                AssertInvariants();
                if (_decreaseAskedFor == generation)
                {
                    return; // this burst's decrease is already asked for
                }

                _decreaseAskedFor = generation;
                _decreaseSeenBudget = _fleet.Budget;
                _decreasePending = true;
                _growthPending = false;
            }

            Wake.Set();
        }
    }

    /// <summary>The next request for Redis, if any: an overload (with any pause) before growth evidence.</summary>
    public BudgetRequest? TakeRequest()
    {
        var windowMs = Math.Max(1, (long)Math.Ceiling(Window.TotalMilliseconds));
        lock (_lock)
        {
            AssertInvariants();
            if (_decreasePending || _pausePendingMs > 0)
            {
                // A pause alone carries a generation no decrease matches unless one is pending too: it pauses, it does not cut.
                var request = _decreasePending
                    ? new BudgetRequest(true, _decreaseAskedFor, windowMs, _pausePendingMs, _options.BackoffRatio, _decreaseSeenBudget)
                    : new BudgetRequest(true, -1, windowMs, _pausePendingMs, _options.BackoffRatio);
                _decreasePending = false;
                _pausePendingMs = 0;
                return request;
            }

            if (_growthPending)
            {
                _growthPending = false;
                return new BudgetRequest(false, _fleet.Generation, windowMs, 0, _options.BackoffRatio);
            }

            return null;
        }
    }

    /// <summary>Takes in the script's answer to <paramref name="request"/>.</summary>
    /// <remarks>
    /// An overload the script turned down although its generation was current came within a window of the last decrease
    /// (the fleet's leases were still draining to the new budget): the next overload of an item started after that may
    /// ask again.
    /// </remarks>
    public void OnReply(BudgetRequest request, BudgetReply reply)
    {
        if (request.Overload && !reply.Changed && reply.Generation == request.Generation)
        {
            lock (_lock)
            {
                AssertInvariants();
                if (_decreaseAskedFor == request.Generation && !_decreasePending)
                {
                    _decreaseAskedFor = -1;
                }
            }
        }
    }

    /// <summary>A request that failed (Redis unreachable): keep its pause for the next try; the next overload may ask again.</summary>
    public void OnRequestFailed(BudgetRequest request)
    {
        lock (_lock)
        {
            AssertInvariants();
            if (request.Overload)
            {
                _pausePendingMs = Math.Max(_pausePendingMs, request.PauseMs);
                _decreaseAskedFor = -1;
            }
        }
    }

    /// <summary>True (once per lease) while this process still owes leases after the budget fell: the finished item's lease goes back to Redis.</summary>
    public bool TryShed()
    {
        var owed = Volatile.Read(ref _toShed);
        while (owed > 0)
        {
            var seen = Interlocked.CompareExchange(ref _toShed, owed - 1, owed);
            if (seen == owed)
            {
                return true;
            }

            owed = seen;
        }

        return false;
    }

    /// <summary>
    /// True (once per overloaded attempt) when a finished item's lease should sit out one window here instead of going to
    /// the next item: against a downstream that rejects at once, a lease over its capacity would otherwise be rejected
    /// again and again within one window, one 429 per round trip, until the decrease lands.
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
                    _parked.Enqueue(_time.GetTimestamp() + Volatile.Read(ref _windowTicks));
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

    /// <summary>
    /// The budget moved. Down: this process sheds its proportional part of the decrease (held x (1 - new / old)) as its
    /// items end, and returns idle leases after the linger; summed over the processes that is the decrease. Up: the
    /// waiters here try Redis again.
    /// </summary>
    private void OnBudgetChanged(int old, int budget)
    {
        Interlocked.Exchange(ref _budgetSeenAt, _time.GetTimestamp());
        if (budget < old)
        {
            var held = _leases.HeldCount;
            var keep = (int)((long)held * budget / old);
            Volatile.Write(ref _toShed, Math.Max(0, held - keep));
            if (_leases.Idle > 0)
            {
                _leases.ArmLinger();
            }
        }
        else
        {
            Volatile.Write(ref _toShed, 0);
            if (_leases.WaiterCount > 0)
            {
                _leases.PumpWake.Set();
            }
        }
    }

    [Conditional("DEBUG")]
    private void AssertInvariants() => Debug.Assert(_lock.IsHeldByCurrentThread);
}
