using System.Diagnostics;

using FanOut.Diagnostics;
using FanOut.Limits.Adaptive;

namespace FanOut;

/// <summary>
/// A limit that slow-starts (doubles every round, or every <see cref="AdaptiveControlLaw.RampInterval"/> while rounds are
/// slower than that, as long as latency stays flat and the limit is used), measuring the uncontended latency from its
/// earliest completions, then holds within a latency band around that baseline, and backs off on overload failures.
/// The statistics live in <see cref="LatencyStatistics"/>, the decisions in <see cref="AdaptiveControlLaw"/>; this
/// class feeds them completions under its lock and runs the slow-start ramp's timer. See docs/library.md.
/// </summary>
internal sealed class AdaptiveConcurrencyLimit : ConcurrencyLimit
{
    /// <summary><see cref="_rampState"/>: no timer; the next item start that fills the limit, or a wait, creates one.</summary>
    private const int RampIdle = 0;

    /// <summary><see cref="_rampState"/>: a timer runs.</summary>
    private const int RampRunning = 1;

    /// <summary><see cref="_rampState"/>: slow start is over (or the limit is at its maximum); never again.</summary>
    private const int RampFinished = 2;

    private readonly AdaptiveLimitOptions _options;
    private readonly TimeProvider _time;
    private readonly Func<Exception, bool> _isOverload;
    private readonly LatencyStatistics _statistics;
    private readonly AdaptiveControlLaw _law;

    /// <summary>
    /// The ramp timer's period: .NET timers count whole milliseconds, and fire on the system's coarse clock (every 4 ms on a
    /// kernel ticking at 250 Hz, whatever the period), so each tick doubles once for every
    /// <see cref="AdaptiveControlLaw.RampInterval"/> that passed: the ramp keeps its pace in time, not in ticks.
    /// </summary>
    internal static readonly TimeSpan RampTickPeriod = TimeSpan.FromMilliseconds(1);

    /// <summary>Ticks of <see cref="_time"/> in one <see cref="AdaptiveControlLaw.RampInterval"/>.</summary>
    private readonly long _rampTicks;

    /// <summary>Guards the statistics, the law and the ramp timer; user code (the overload test) runs before it is taken.</summary>
    private readonly Lock _lock = new();

    private volatile int _limit;
    private int _peak;

    /// <summary>RampIdle, RampRunning or RampFinished; read on every item start, so the ramp costs one read once it is over.</summary>
    private volatile int _rampState;

    /// <summary>
    /// True until the first window's end is fixed: until then each item start is counted, and the
    /// <see cref="AdaptiveControlLaw.FirstWindowSamples"/>-th fixes it, so the baseline's seed is the first items started
    /// (all of them, however long they take), not the earliest completions of a crowd the ramp started (its luckiest ones).
    /// </summary>
    private volatile bool _countingFirstWindow = true;

    /// <summary>True once an item has completed (see <see cref="MayRiseUnprompted"/>).</summary>
    private volatile bool _anyCompleted;

    /// <summary>Item starts counted while <see cref="_countingFirstWindow"/>.</summary>
    private int _firstWindowStarts;

    /// <summary>Doublings the ramp held back while the first window's items were still starting.</summary>
    private long _owedDoublings;

    /// <summary>The most completions <see cref="HoldBack"/> keeps: a blind crowd and its first replacements.</summary>
    private const int MaxHeldBack = 2 * AdaptiveControlLaw.BlindRampLimit;

    /// <summary>Completions of items started after the first window's, while it was still open (see <see cref="CountHeldBack"/>).</summary>
    private HeldBackCompletion[]? _heldBack;

    private int _heldBackCount;

    /// <summary>The slow-start ramp's timer while it runs.</summary>
    private ITimer? _rampTimer;

    /// <summary>When the limit last grew (or the ramp started), in timestamp ticks.</summary>
    private long _lastIncrease;

    public AdaptiveConcurrencyLimit(AdaptiveLimitOptions options)
    {
        options.Validate();
        _options = options;
        _time = options.TimeProvider;
        _isOverload = options.IsOverload ?? AdaptiveLimitOptions.IsOverloadByDefault;
        _statistics = new LatencyStatistics(options.MaxLimit, options.MinWindowSamples);
        _law = new AdaptiveControlLaw(options);
        _rampTicks = Math.Max(1, (long)(AdaptiveControlLaw.RampInterval.TotalSeconds * _time.TimestampFrequency));
        _rampState = options.InitialLimit >= options.MaxLimit ? RampFinished : RampIdle;
        _limit = options.InitialLimit;
        _peak = options.InitialLimit;
        FanOutMetrics.RecordLimit(_limit, Kind);
    }

    public override int Current => _limit;

    public override int Peak => Volatile.Read(ref _peak);

    public override string Kind => "adaptive";

    /// <summary>The uncontended latency the limit compares against; <see cref="TimeSpan.Zero"/> until measured.</summary>
    internal TimeSpan Baseline
    {
        get
        {
            lock (_lock)
            {
                return TimeSpan.FromSeconds(_statistics.Baseline / _time.TimestampFrequency);
            }
        }
    }

    /// <summary>True until the first back-off.</summary>
    internal bool InSlowStart
    {
        get
        {
            lock (_lock)
            {
                return _law.InSlowStart;
            }
        }
    }

    /// <summary>True while the slow-start ramp's timer runs.</summary>
    internal bool RampTimerRunning => _rampState == RampRunning;

    /// <summary>Slow start's ramp runs, or will once a worker waits, and nothing has completed yet: only the timer can make room.</summary>
    protected internal override bool MayRiseUnprompted => _rampState != RampFinished && !_anyCompleted;

    protected internal override bool WantsSamples => true;

    public override int MaxCurrent => _options.MaxLimit;

    /// <summary>Synchronous bodies gain nothing from more workers than cores, whatever the limit allows asynchronous ones.</summary>
    protected internal override int WorkerHint => Math.Min(_limit, Environment.ProcessorCount);

    public override TimeProvider TimeProvider => _time;

    /// <summary>The user's overload test as it is (it may throw): the run decides on a re-run with it and records what it throws.</summary>
    public override bool IsOverload(Exception failure) => _isOverload(failure);

    /// <summary>Waits for a permit; the wait starts the slow-start ramp's timer (a run that never waits never creates one).</summary>
    protected override Task<bool> WaitAsyncCore(CancellationToken cancellationToken)
    {
        if (_rampState == RampIdle)
        {
            StartRamp();
        }

        return base.WaitAsyncCore(cancellationToken);
    }

    /// <summary>
    /// Called as each item starts (its permit taken): the start that fills the limit starts the slow-start ramp's timer, so a
    /// run that never fills it (one item, a trickle) never creates one; and the first window's starts are counted.
    /// </summary>
    protected override long OnItemStarting()
    {
        if (_rampState == RampIdle && InFlight >= _limit)
        {
            StartRamp();
        }

        var timestamp = _time.GetTimestamp();
        if (_countingFirstWindow)
        {
            CountFirstWindowStart(timestamp);
        }

        return timestamp;
    }

    /// <summary>Counts an item start; the last one the first window takes fixes its end.</summary>
    private void CountFirstWindowStart(long timestamp)
    {
        if (Interlocked.Increment(ref _firstWindowStarts) != AdaptiveControlLaw.FirstWindowSamples)
        {
            return;
        }

        int before, after;
        lock (_lock)
        {
            _countingFirstWindow = false;
            if (_statistics.PoolCount == 0 && _statistics.WindowEnd == long.MaxValue)
            {
                _statistics.EndWindowAt(timestamp + 1, AdaptiveControlLaw.FirstWindowSamples);
            }

            before = _law.Limit;
            if (_rampState == RampRunning && _owedDoublings > 0)
            {
                // The doublings the ramp held back are due now, if the limit it stopped at is in use (this start included).
                Ramp(_owedDoublings, InFlight);
                _owedDoublings = 0;
                Publish(_law.Limit, timestamp + 1); // after this start: the item counts for the level it started under
            }

            after = _law.Limit;
        }

        Announce(before, after);
    }

    protected override void OnItemCompleted(long startTimestamp, ItemOutcome outcome)
    {
        if (outcome == ItemOutcome.Canceled)
        {
            // Latency and failures of a canceled run describe the cancellation, not the downstream. A first window that
            // loses an item to it can never close: open it again, so the next call on this limit still measures a baseline.
            ReopenFirstWindowAfter(startTimestamp);
            return;
        }

        if (!_anyCompleted)
        {
            _anyCompleted = true;
        }

        var succeeded = outcome == ItemOutcome.Succeeded;
        var overload = outcome == ItemOutcome.Overloaded;
        var now = _time.GetTimestamp();
        var inFlight = InFlight;
        int before, after;
        lock (_lock)
        {
            AssertInvariants();
            before = _law.Limit;
            if (startTimestamp >= _statistics.WindowEnd && !overload)
            {
                // Started after the first window's items: kept until they have set the baseline, then counted.
                HoldBack(startTimestamp, now - startTimestamp, succeeded);
                return;
            }

            if (startTimestamp < _statistics.WindowStart)
            {
                if (!overload)
                {
                    return;
                }

                _law.OnStaleOverload(inFlight);
            }
            else
            {
                if (succeeded)
                {
                    _law.OnSuccess(startTimestamp, now - startTimestamp, _statistics);
                }

                _statistics.Record(now - startTimestamp, succeeded, overload, inFlight);
                if (_statistics.WindowItems < _law.WindowSize(_statistics) && _statistics.WindowOverloads == 0)
                {
                    return;
                }

                _law.Decide(_statistics, inFlight);
                if (_law.Holding)
                {
                    _law.Holding = false;
                    _law.HoldUntil = _statistics.WindowItems + before;
                }
                else
                {
                    _law.HoldUntil = 0;
                    _statistics.ResetWindow(_law.Limit == before ? _statistics.WindowStart : now);
                    CountHeldBack(inFlight);
                }
            }

            after = _law.Limit;
            Publish(after, now);
        }

        Announce(before, after);
    }

    /// <summary>
    /// Called for a canceled item: while no baseline is measured, a canceled item of the current first window leaves it one
    /// sample short for good, so the window starts again with the next item started (items started before now are left out).
    /// </summary>
    private void ReopenFirstWindowAfter(long startTimestamp)
    {
        lock (_lock)
        {
            AssertInvariants();
            if (_statistics.PoolCount != 0 || startTimestamp < _statistics.WindowStart)
            {
                return; // a baseline exists, or the item belonged to a window already abandoned
            }

            _statistics.ResetWindow(_time.GetTimestamp() + 1);
            _heldBack = null;
            _heldBackCount = 0;
            _owedDoublings = 0;
            _firstWindowStarts = 0;
            _countingFirstWindow = true;
        }
    }

    /// <summary>Keeps a completion that came in while the first window was still open (under the lock).</summary>
    private void HoldBack(long startTimestamp, long latency, bool succeeded)
    {
        _heldBack ??= new HeldBackCompletion[Math.Min(_statistics.WindowCapacity, MaxHeldBack)];
        if (_heldBackCount < _heldBack.Length)
        {
            _heldBack[_heldBackCount++] = new(startTimestamp, latency, succeeded);
        }
    }

    /// <summary>
    /// Once the first window has set the baseline, counts the completions held back meanwhile (under the lock): each
    /// success toward verifying the level it started at, and each in the new window if it started within it. A crowd the
    /// ramp started often completes in the same timer tick as the first window's items; dropped, its items would not
    /// verify their level until the next round.
    /// </summary>
    private void CountHeldBack(int inFlight)
    {
        if (_heldBackCount == 0 || _statistics.PoolCount == 0)
        {
            return;
        }

        foreach (var held in _heldBack.AsSpan(0, _heldBackCount))
        {
            if (held.Succeeded)
            {
                _law.OnSuccess(held.StartTimestamp, held.Latency, _statistics);
            }

            // Short of a full window: the next completion closes it, as any other would.
            if (held.StartTimestamp >= _statistics.WindowStart && _statistics.WindowItems < _law.WindowSize(_statistics) - 1)
            {
                _statistics.Record(held.Latency, held.Succeeded, overload: false, inFlight);
            }
        }

        _heldBackCount = 0;
        _heldBack = null;
    }

    /// <summary>Creates the ramp's timer unless another item start just did, or the ramp is over.</summary>
    private void StartRamp()
    {
        lock (_lock)
        {
            if (_rampState != RampIdle)
            {
                return;
            }

            if (!_law.InSlowStart || _law.Limit >= _options.MaxLimit)
            {
                _rampState = RampFinished;
                return;
            }

            _lastIncrease = _time.GetTimestamp();
            _rampState = RampRunning;

            // The timer must not capture the caller's ExecutionContext (AsyncLocal values) for the life of the ramp.
            var restore = !ExecutionContext.IsFlowSuppressed();
            var flow = restore ? ExecutionContext.SuppressFlow() : default;
            try
            {
                _rampTimer = _time.CreateTimer(static state => ((AdaptiveConcurrencyLimit)state!).OnRampTick(), this, RampTickPeriod, RampTickPeriod);
            }
            finally
            {
                if (restore)
                {
                    flow.Undo();
                }
            }
        }
    }

    /// <summary>One tick of the slow-start ramp: doubles a used limit that has not grown for a whole interval.</summary>
    private void OnRampTick()
    {
        var inFlight = InFlight;
        int before, after;
        lock (_lock)
        {
            AssertInvariants();
            if (_rampState != RampRunning)
            {
                return;
            }

            if (!_law.InSlowStart || _law.Limit >= _options.MaxLimit || inFlight == 0)
            {
                // Slow start is over, or nothing runs (the run ended or paused): the next start that fills the limit restarts it.
                StopRamp(_law.InSlowStart && _law.Limit < _options.MaxLimit ? RampIdle : RampFinished);
                return;
            }

            var now = _time.GetTimestamp();
            _statistics.ObserveInFlight(inFlight);
            before = _law.Limit;
            var peak = Math.Max(inFlight, _statistics.WindowPeakInFlight);
            Ramp((now - _lastIncrease) / _rampTicks, peak);
            after = _law.Limit;
            Publish(after, now);
        }

        try
        {
            Announce(before, after);
        }
        catch (Exception)
        {
            // A metrics listener (user code) threw: on a timer thread that would end the process. The limit has changed
            // already; the next completion wakes any waiter this missed.
        }
    }

    /// <summary>
    /// Doubles the limit once per interval that passed (the law's ceilings bound them); the first doubling needs a limit that
    /// was fully used (<paramref name="peakInFlight"/>), the others a crowd of at least the first window's size. Until the
    /// first window's items have all started, the ramp stops at their number and keeps the doublings it owes for the start
    /// that completes them (<see cref="CountFirstWindowStart"/>): the baseline's seed then starts ahead of the crowd, not
    /// inside it, where a downstream may serve it last.
    /// </summary>
    private void Ramp(long intervals, int peakInFlight)
    {
        Debug.Assert(_lock.IsHeldByCurrentThread);
        var seedStarting = _countingFirstWindow && _law.Limit <= AdaptiveControlLaw.FirstWindowSamples;
        var cap = seedStarting ? AdaptiveControlLaw.FirstWindowSamples : int.MaxValue;
        _owedDoublings = 0;
        for (var doublings = 0; doublings < intervals; doublings++)
        {
            // Past the first doubling, one or two bodies at once (an app-limited source) earn no more: one step per tick, not
            // the intervals it missed, so their limit does not run far ahead of its use.
            var stalled = doublings > 0 && peakInFlight < AdaptiveControlLaw.FirstWindowSamples;
            if (stalled || !_law.TryRamp(doublings == 0 ? peakInFlight : _law.Limit, cap))
            {
                if (seedStarting && _law.Limit == cap)
                {
                    _owedDoublings = intervals - doublings;
                }

                return;
            }
        }
    }

    private void StopRamp(int state)
    {
        _rampState = state;
        _rampTimer?.Dispose();
        _rampTimer = null;
    }

    /// <summary>Makes the law's limit the limit everyone reads (under the lock).</summary>
    private void Publish(int limit, long now)
    {
        if (limit > _limit)
        {
            _lastIncrease = now;
        }

        if (limit != _limit)
        {
            _law.RecordChange(now);
        }

        _limit = limit;
        if (limit > _peak)
        {
            Volatile.Write(ref _peak, limit);
        }

        if (_rampState == RampRunning && (!_law.InSlowStart || limit >= _options.MaxLimit))
        {
            StopRamp(RampFinished);
        }
    }

    /// <summary>Records a change and wakes the waiters a rise admits (outside the lock).</summary>
    private void Announce(int before, int after)
    {
        if (after == before)
        {
            return;
        }

        OnCurrentChanged();
    }

    [Conditional("DEBUG")]
    private void AssertInvariants()
    {
        Debug.Assert(_lock.IsHeldByCurrentThread);
        Debug.Assert(_limit == _law.Limit);
        Debug.Assert(_limit >= _options.MinLimit && _limit <= _options.MaxLimit);
        Debug.Assert(_peak >= _limit);
    }

    /// <summary>A completion kept until the first window has set the baseline.</summary>
    private readonly record struct HeldBackCompletion(long StartTimestamp, long Latency, bool Succeeded);
}
