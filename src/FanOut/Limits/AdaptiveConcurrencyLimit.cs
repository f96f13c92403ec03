using System.Diagnostics;

using FanOut.Diagnostics;
using FanOut.Execution;
using FanOut.Limits.Adaptive;

namespace FanOut;

/// <summary>
/// A limit that slow-starts from a small initial limit (one more permit per uncontended answer while the limit is in use:
/// a doubling per round trip, and nothing before the first answer), measuring the uncontended latency from its first
/// items, then holds within a latency band around that baseline, and backs off on overload failures. The statistics live
/// in <see cref="LatencyStatistics"/>, the decisions in <see cref="AdaptiveControlLaw"/>, the pace at which slow start's
/// growth is granted in <see cref="SlowStartPacer"/>; this class feeds them completions under its lock. Only answers move
/// the law; its two timers grant the paced growth and end a Retry-After pause (see <see cref="Pause"/>). See docs/adaptive.md.
/// </summary>
internal sealed class AdaptiveConcurrencyLimit : ConcurrencyLimit
{
    private readonly AdaptiveLimitOptions _options;
    private readonly TimeProvider _time;
    private readonly Func<Exception, bool> _isOverload;
    private readonly LatencyStatistics _statistics;
    private readonly AdaptiveControlLaw _law;

    /// <summary>The staged law on the bandwidth-delay product, when the options ask for it (then <see cref="_law"/> is not fed).</summary>
    private readonly BandwidthDelayLaw? _model;

    private readonly SlowStartPacer _pacer;

    /// <summary>Grants slow start's paced growth when it is due (see <see cref="OnPaceTimer"/>).</summary>
    private readonly LimitTimer _paceTimer;

    /// <summary>Ends a Retry-After pause (see <see cref="OnPauseTimer"/>).</summary>
    private readonly LimitTimer _pauseTimer;

    /// <summary>Guards the statistics and the law; user code (the overload test) runs before it is taken.</summary>
    private readonly Lock _lock = new();

    /// <summary>The limit the pool grants: the law's, or below it while slow start's growth is paced.</summary>
    private volatile int _limit;

    /// <summary>Why the law's limit is what it is: the reason of its last change (under the lock).</summary>
    private LimitChangeReason _reason;

    /// <summary>Changes published so far (under the lock): each change's sequence number, so a listener can order changes published from different threads.</summary>
    private long _changes;

    /// <summary>The window median the law's last change was decided on, in timestamp ticks (under the lock; 0: none read).</summary>
    private double _reasonMedian;

    /// <summary>True while <see cref="_limit"/> is below the law's and the pace timer will raise it.</summary>
    private volatile bool _pacing;
    private int _peak;

    /// <summary>
    /// True until the first window's end is fixed: until then each item start is counted, and the
    /// <see cref="AdaptiveControlLaw.FirstWindowSamples"/>-th fixes it, so the baseline's seed is the first items started
    /// (all of them, or the slowest counted as still out: <see cref="CloseOverdueFirstWindow"/>), not the earliest completions of
    /// the items started after them (their luckiest ones).
    /// </summary>
    private volatile bool _countingFirstWindow = true;

    /// <summary>
    /// Items started before the current window that are still running (under the lock): the bodies running when it began,
    /// less those of them that completed since. The rest of the bodies running started in the window.
    /// </summary>
    private int _olderRunning;

    /// <summary>True when the current window goes on gathering the last one's items (its starts are not counted from its start).</summary>
    private bool _windowKept;

    /// <summary>When an overload last cut the limit (under the lock): a rejection of an item started before it is already answered by that cut.</summary>
    private long _lastCutAt = long.MinValue;

    /// <summary>Item starts counted while <see cref="_countingFirstWindow"/> (under the lock).</summary>
    private int _firstWindowStarts;

    /// <summary>The most completions <see cref="HoldBack"/> keeps: the answers that came in before the first window's last.</summary>
    private const int MaxHeldBack = 256;

    /// <summary>Completions of items started after the first window's, while it was still open (see <see cref="CountHeldBack"/>).</summary>
    private HeldBackCompletion[]? _heldBack;

    private int _heldBackCount;

    /// <summary>When the first completion came in (under the lock): items started before it are the first round, the initial window.</summary>
    private long _firstAnswerAt = long.MaxValue;

    /// <summary>True while a Retry-After pause is on: <see cref="Current"/> is 0, so the pool grants no permit.</summary>
    private volatile bool _paused;

    /// <summary>When the last pause began (under the lock): overloads of attempts started by then are that storm's.</summary>
    private long _pauseStart = long.MinValue;

    /// <summary>When the pause ends (under the lock); the timer re-arms itself until this has passed.</summary>
    private long _pauseEnd;

    /// <summary>Answers that said "overloaded" since creation (for watchers).</summary>
    private long _overloads;

    /// <summary>Retry-After pauses begun since creation (for watchers; under the lock).</summary>
    private long _pauses;

    /// <summary>Latencies of successful answers since a watcher last read them, and their count (under the lock).</summary>
    private long _answeredLatency, _answered;

    public AdaptiveConcurrencyLimit(AdaptiveLimitOptions options)
        : base(LimitTraits.LearnsFromWork)
    {
        options.Validate();
        _options = options;
        _time = options.TimeProvider;
        _isOverload = options.IsOverload ?? AdaptiveLimitOptions.IsOverloadByDefault;
        _statistics = new LatencyStatistics(options.MaxLimit, options.MinWindowSamples);
        _law = new AdaptiveControlLaw(options);
        if (options.UsesBandwidthDelayLaw)
        {
            _model = new BandwidthDelayLaw(options);
            _countingFirstWindow = false;
        }

        _pacer = new SlowStartPacer(options.InitialLimit, options.SlowStartPace, _time.TimestampFrequency);
        _paceTimer = new LimitTimer(_time, static s => ((AdaptiveConcurrencyLimit)s!).OnPaceTimer(), this);
        _pauseTimer = new LimitTimer(_time, static s => ((AdaptiveConcurrencyLimit)s!).OnPauseTimer(), this);
        _limit = options.InitialLimit;
        _peak = options.InitialLimit;
        FanOutMetrics.RecordLimit(this);
    }

    /// <summary>The law's limit, or 0 while a Retry-After pause is on.</summary>
    public override int Current => _paused ? 0 : _limit;

    public override int Peak => Volatile.Read(ref _peak);

    public override string Kind => "adaptive";

    public override string? Name => _options.Name;

    internal override LimitStateReading ReadState()
    {
        lock (_lock)
        {
            var latency = _answered == 0 ? -1 : Milliseconds((double)_answeredLatency / _answered);
            _answeredLatency = _answered = 0;
            return new(Current, InFlight, Waiting, latency, Milliseconds(LawBaseline), Volatile.Read(ref _overloads), _pauses, _changes);
        }
    }

    /// <summary>The uncontended latency the limit compares against; <see cref="TimeSpan.Zero"/> until measured.</summary>
    internal TimeSpan Baseline
    {
        get
        {
            lock (_lock)
            {
                return TimeSpan.FromSeconds(LawBaseline / _time.TimestampFrequency);
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
                return LawInSlowStart;
            }
        }
    }

    public override int MaxCurrent => _options.MaxLimit;

    /// <summary>Synchronous bodies gain nothing from more workers than cores, whatever the limit allows asynchronous ones.</summary>
    internal override int WorkerHint => Math.Min(_limit, Environment.ProcessorCount);

    /// <summary>The limit the law in use decided (under the lock).</summary>
    private int LawLimit => _model?.Limit ?? _law.Limit;

    /// <summary>True while the law in use is in slow start (under the lock).</summary>
    private bool LawInSlowStart => _model?.InSlowStart ?? _law.InSlowStart;

    /// <summary>The latency without a queue the law in use compares with, in timestamp ticks (0: none yet; under the lock).</summary>
    private double LawBaseline => _model?.Baseline ?? (_statistics.PoolCount > 0 ? _statistics.Baseline : 0);

    public override TimeProvider TimeProvider => _time;

    /// <summary>
    /// True while paused or while slow start's growth is paced: a timer raises <see cref="Current"/> with nothing
    /// completing, so a call keeps a waiter.
    /// </summary>
    internal override bool MayRiseUnprompted => _paused || _pacing;

    /// <summary>True while a Retry-After pause is on (for tests).</summary>
    internal bool IsPaused => _paused;

    /// <summary>The user's overload test as it is (it may throw): the run decides on a re-run with it and records what it throws.</summary>
    public override bool IsOverload(Exception failure) => _isOverload(failure);

    /// <summary>Called as each item starts (its permit taken): the first window's starts are counted.</summary>
    protected override long OnItemStarting() => _countingFirstWindow ? CountFirstWindowStart() : _time.GetTimestamp();

    /// <summary>
    /// Reads a start's clock and counts it as one step under the lock, so the start that fixes the first window's end is the
    /// latest of its starts (read apart, a worker preempted between the two ended the window before another's start it had
    /// counted: the window could never fill, and the limit held its initial value with no baseline for good).
    /// </summary>
    private long CountFirstWindowStart()
    {
        lock (_lock)
        {
            var timestamp = _time.GetTimestamp();
            if (!_countingFirstWindow || timestamp < _statistics.WindowStart || ++_firstWindowStarts != AdaptiveControlLaw.FirstWindowSamples)
            {
                return timestamp; // the end is fixed already, or this began before a reopened window (it counts as an older item)
            }

            _countingFirstWindow = false;
            if (_statistics.PoolCount == 0 && _statistics.WindowEnd == long.MaxValue)
            {
                _statistics.EndWindowAt(timestamp + 1, AdaptiveControlLaw.FirstWindowSamples);
            }

            return timestamp;
        }
    }

    protected override void OnItemCompleted(long startTimestamp, ItemOutcome outcome) => OnItemCompleted(startTimestamp, outcome, retryAfter: null);

    /// <summary>
    /// Feeds a completion to the law, and honours a Retry-After: an overload with a hint pauses the limit (one back-off, not
    /// one per rejected attempt); an overload of an attempt started before the pause began belongs to the same storm, so it
    /// extends the pause by its own hint and the law does not see it (a pause is not a capacity signal).
    /// </summary>
    protected override void OnItemCompleted(long startTimestamp, ItemOutcome outcome, TimeSpan? retryAfter)
    {
        if (outcome == ItemOutcome.Overloaded)
        {
            Interlocked.Increment(ref _overloads);

            // A hint beyond MaxHonouredRetryAfter fails the item instead of being waited out (OverloadRule): nobody sits idle for it.
            var hint = retryAfter is { } given && given > TimeSpan.Zero && given <= OverloadBackoff.MaxHonouredRetryAfter ? given : TimeSpan.Zero;
            if (Pause(startTimestamp, hint))
            {
                return;
            }
        }

        Learn(startTimestamp, outcome);
    }

    /// <summary>
    /// Starts or extends a pause for an overloaded attempt with a hint of <paramref name="hint"/> (zero: none, or beyond
    /// <see cref="OverloadBackoff.MaxHonouredRetryAfter"/>). Returns true when the attempt belongs to a pause already begun
    /// (started before it, while it is on or with a hint of its own): the law then does not count it.
    /// </summary>
    private bool Pause(long startTimestamp, TimeSpan hint)
    {
        var now = _time.GetTimestamp();
        bool covered, starts = false;
        long due = 0;
        LimitChange change = default;
        lock (_lock)
        {
            AssertInvariants();
            covered = startTimestamp <= _pauseStart && (_paused || hint > TimeSpan.Zero);
            if (hint > TimeSpan.Zero)
            {
                var end = now + (long)(hint.TotalSeconds * _time.TimestampFrequency);
                if (!covered)
                {
                    _pauseStart = now;
                }

                if (!_paused)
                {
                    _paused = true;
                    _pauses++;
                    _pauseEnd = end;
                    starts = true;
                    due = end - now;
                    change = new(_limit, 0, LimitChangeReason.RetryAfterPause, 0, 0, InFlight, ++_changes);
                }
                else if (end > _pauseEnd)
                {
                    _pauseEnd = end;
                    due = end - now;
                }
            }
        }

        if (starts)
        {
            FanOutMetrics.RecordLimit(this); // 0 while the pause is on
            Tell(change);
        }

        if (due > 0)
        {
            _pauseTimer.Arm(due);
        }

        return covered;
    }

    /// <summary>What the law learns from one completion (every completion a pause does not cover).</summary>
    private void Learn(long startTimestamp, ItemOutcome outcome)
    {
        if (outcome == ItemOutcome.Canceled)
        {
            // Latency and failures of a canceled run describe the cancellation, not the downstream. A first window that
            // loses an item to it can never close: open it again, so the next call on this limit still measures a baseline.
            if (_model is null)
            {
                ReopenFirstWindowAfter(startTimestamp);
            }

            return;
        }

        if (_model is not null)
        {
            LearnFromModel(startTimestamp, outcome);
            return;
        }

        var succeeded = outcome == ItemOutcome.Succeeded;
        var overload = outcome == ItemOutcome.Overloaded;
        var now = _time.GetTimestamp();
        var inFlight = InFlight;
        LimitChange change;
        long paceDue;
        lock (_lock)
        {
            AssertInvariants();
            _firstAnswerAt = Math.Min(_firstAnswerAt, now);
            if (succeeded)
            {
                CountAnswer(now - startTimestamp);
                _law.OnSuccess(startTimestamp, now - startTimestamp, _statistics);
                Answer(now - startTimestamp, inFlight);
            }

            if (startTimestamp >= _statistics.WindowEnd && !overload)
            {
                // Started after the first window's items: kept until they have set the baseline, then counted.
                HoldBack(startTimestamp, now - startTimestamp, succeeded, inFlight);
                if (CloseOverdueFirstWindow(now, inFlight))
                {
                    Decide(inFlight, now);
                }
            }
            else if (startTimestamp < _statistics.WindowStart && (!overload || startTimestamp < _lastCutAt))
            {
                _olderRunning = Math.Max(0, _olderRunning - 1);
                _statistics.CountStarts(now, _statistics.WindowItems + Math.Max(0, inFlight - 1 - _olderRunning));
                if (overload)
                {
                    var lawBefore = _law.Limit;
                    _law.OnStaleOverload(inFlight);
                    NoteReason(lawBefore, LimitChangeReason.Overload, 0);
                    if (_law.Limit < lawBefore)
                    {
                        _lastCutAt = now;
                    }
                }
            }
            else
            {
                if (startTimestamp < _statistics.WindowStart)
                {
                    // A rejection of an item started after the last cut, in an earlier window: the level since the cut is too high as well.
                    _olderRunning = Math.Max(0, _olderRunning - 1);
                }

                _statistics.Record(startTimestamp, now - startTimestamp, succeeded, overload, inFlight);
                _statistics.CountStarts(now, _statistics.WindowItems + Math.Max(0, inFlight - 1 - _olderRunning));
                if (_statistics.WindowItems >= _law.WindowSize(_statistics) || _statistics.WindowOverloads != 0)
                {
                    if (_statistics.PoolCount > 0 && _law.InSlowStart && !_windowKept)
                    {
                        _statistics.CloseRound(now);
                    }
                    else
                    {
                        _statistics.ClearRound();
                    }

                    Decide(inFlight, now);
                }
            }

            change = Publish(now, inFlight, out paceDue);
        }

        Decided(change, paceDue);
    }

    /// <summary>What the staged law learns from one completion: every answer goes to it, and it decides.</summary>
    private void LearnFromModel(long startTimestamp, ItemOutcome outcome)
    {
        var model = _model!;
        var now = _time.GetTimestamp();
        var inFlight = InFlight;
        var succeeded = outcome == ItemOutcome.Succeeded;
        LimitChange change;
        long paceDue;
        lock (_lock)
        {
            AssertInvariants();
            if (succeeded)
            {
                CountAnswer(now - startTimestamp);
            }

            var decision = model.OnAnswer(startTimestamp, now - startTimestamp, succeeded, outcome == ItemOutcome.Overloaded, inFlight, now);
            if (decision.Reason != LimitChangeReason.Hold)
            {
                _reason = decision.Reason;
                _reasonMedian = model.ReadingMedian;
            }

            change = Publish(now, inFlight, out paceDue);
        }

        Decided(change, paceDue);
    }

    /// <summary>Counts a successful answer's latency for watchers (under the lock).</summary>
    private void CountAnswer(long latency)
    {
        _answeredLatency += latency;
        _answered++;
    }

    /// <summary>After an answer's decision (outside the lock): arms the pace for growth still owed, and publishes the change.</summary>
    private void Decided(LimitChange change, long paceDue)
    {
        if (paceDue > 0)
        {
            _paceTimer.Arm(paceDue);
        }

        NoteUse();
        Announce(change);
    }

    /// <summary>The pause's timer fired: ends the pause if its end has passed (else waits for the rest), and wakes the waiters.</summary>
    private void OnPauseTimer()
    {
        long rest;
        LimitChange change = default;
        lock (_lock)
        {
            if (!_paused)
            {
                return;
            }

            rest = _pauseEnd - _time.GetTimestamp();
            if (rest <= 0)
            {
                _paused = false;
                change = new(0, _limit, LimitChangeReason.PauseEnded, 0, 0, InFlight, ++_changes);
            }
        }

        if (rest > 0)
        {
            _pauseTimer.Arm(rest); // extended meanwhile by a longer hint
            return;
        }

        OnCurrentChanged(); // the gauge shows the law's limit again, and the waiters it admits are granted
        Tell(change);
    }

    /// <summary>Slow start's paced growth is due: grants what the pace allows now (re-arming for the rest), and wakes the waiters.</summary>
    private void OnPaceTimer()
    {
        LimitChange change;
        long due;
        lock (_lock)
        {
            AssertInvariants();
            change = Publish(_time.GetTimestamp(), InFlight, out due);
        }

        if (due > 0)
        {
            _paceTimer.Arm(due);
        }

        Announce(change);
    }

    /// <summary>Closes the window: the law decides, and the window is extended or a new one begins (under the lock).</summary>
    private void Decide(int inFlight, long now)
    {
        var before = _law.Limit;
        var decision = _law.Decide(_statistics, inFlight);
        NoteReason(before, decision.Reason, _law.WindowMedian);
        if (decision.Reason == LimitChangeReason.Overload)
        {
            _lastCutAt = now;
        }
        if (!_law.Holding)
        {
            // A new round in slow start (answers have grown the limit meanwhile), or a window after a change, counts only the
            // items that start from now on; an unchanged limit after slow start keeps gathering them.
            var keep = _law.Limit == before && !_law.InSlowStart && decision.Reason != LimitChangeReason.QueueSuspected;
            _statistics.ResetWindow(keep ? _statistics.WindowStart : now);
            _windowKept = keep;
            if (!keep)
            {
                _olderRunning = Math.Max(0, inFlight - 1);
            }
            _law.OnWindowReset();
            var counted = _law.Limit;
            CountHeldBack(inFlight);
            NoteReason(counted, LimitChangeReason.SlowStartGrowth, 0);
        }
    }

    /// <summary>Slow start's growth on an answer (under the lock).</summary>
    private void Answer(long latency, int inFlight)
    {
        var before = _law.Limit;
        _law.OnAnswer(latency, inFlight, _statistics);
        NoteReason(before, LimitChangeReason.SlowStartGrowth, 0);
    }

    /// <summary>Records why the law's limit changed from <paramref name="before"/>, if it did (under the lock).</summary>
    private void NoteReason(int before, LimitChangeReason reason, double windowMedian)
    {
        if (_law.Limit != before)
        {
            _reason = reason;
            _reasonMedian = windowMedian;
        }
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
            _law.OnWindowReset();
            _heldBack = null;
            _heldBackCount = 0;
            _firstWindowStarts = 0;
            _countingFirstWindow = true;
        }
    }

    /// <summary>
    /// Closes a first window whose median is known while items of it are still out (under the lock): more than half of it
    /// answered, and every item still out has been out longer than the slowest answer, so each counts as the slowest with
    /// the time it has been out (the median is what waiting would read). Without this, one of the first items hanging (a
    /// connection that times out after minutes) kept the limit at its initial value, measuring nothing, until it answered.
    /// </summary>
    private bool CloseOverdueFirstWindow(long now, int inFlight)
    {
        var size = _law.WindowSize(_statistics);
        var outFor = now - _statistics.WindowEnd + 1; // the least time an item still out has been out
        if (_statistics.PoolCount != 0 || _statistics.WindowItems >= size || _statistics.WindowSuccesses <= size / 2
            || outFor <= _statistics.SlowestInWindow())
        {
            return false;
        }

        while (_statistics.WindowItems < size)
        {
            _statistics.Record(_statistics.WindowEnd - 1, outFor, succeeded: true, overload: false, inFlight);
        }

        _statistics.ClearRound();
        return true;
    }

    /// <summary>Keeps a completion that came in while the first window was still open (under the lock).</summary>
    private void HoldBack(long startTimestamp, long latency, bool succeeded, int inFlight)
    {
        _heldBack ??= new HeldBackCompletion[Math.Min(_statistics.WindowCapacity, MaxHeldBack)];
        if (_heldBackCount < _heldBack.Length)
        {
            _heldBack[_heldBackCount++] = new(startTimestamp, latency, succeeded, inFlight);
        }
    }

    /// <summary>
    /// Once the first window has set the baseline, counts the completions held back meanwhile (under the lock): each
    /// success toward verifying the level it started at, and each in the new window if it started within it. Items started
    /// after the first window's (a limit above four, or a call sharing the limit) often complete with them; dropped, they
    /// would not verify their level until the next round. A success of the first round (started before anything answered:
    /// an <see cref="AdaptiveLimitOptions.InitialLimit"/> above the first window's four) is also an answer slow start grows
    /// on, judged against the baseline now that there is one, with the calls in flight when it came in: timers of one due
    /// time fire newest first, so a first round of <c>Task.Delay</c> answers before its first four, and without this the
    /// limit did not grow in that round at all (100 x 100 ms at 10 took five round trips instead of four).
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
                if (held.StartTimestamp < _firstAnswerAt)
                {
                    Answer(held.Latency, held.InFlight);
                }
            }

            // Short of a full window: the next completion closes it, as any other would.
            if (held.StartTimestamp >= _statistics.WindowStart && _statistics.WindowItems < _law.WindowSize(_statistics) - 1)
            {
                _statistics.Record(held.StartTimestamp, held.Latency, held.Succeeded, overload: false, inFlight);
            }
        }

        _heldBackCount = 0;
        _heldBack = null;
    }

    /// <summary>
    /// Makes the law's limit the limit everyone reads, at the pace slow start's growth is granted (under the lock). Returns
    /// the change, with the ticks until the pace grants more (0: the law's limit is granted).
    /// </summary>
    private LimitChange Publish(long now, int inFlight, out long paceDue)
    {
        var before = _limit;
        var limit = _pacer.Follow(LawLimit, LawInSlowStart, LawBaseline, now, out paceDue);
        if (limit != _limit && _model is null)
        {
            _law.RecordChange(now, limit);
        }

        _limit = limit;
        _pacing = paceDue > 0;
        if (limit > _peak)
        {
            Volatile.Write(ref _peak, limit);
        }

        // A paced grant of growth decided earlier is slow start's, whatever the law decided since.
        var reason = limit > before && LawInSlowStart && limit < LawLimit ? LimitChangeReason.SlowStartGrowth : _reason;
        return new(before, limit, reason, _reasonMedian, LawBaseline, inFlight, limit != before ? ++_changes : 0);
    }

    /// <summary>Wakes the waiters a rise admits, records the change on the gauge and publishes its reason (outside the lock).</summary>
    private void Announce(LimitChange change)
    {
        if (change.To == change.From)
        {
            return;
        }

        OnCurrentChanged();
        Tell(change);
    }

    /// <summary>Publishes a change with its reason to the event source, the meter and the current activity (outside the lock).</summary>
    private void Tell(LimitChange change)
    {
        NoteUse(); // registers for states when a session watches; the id is taken either way, so both carry the same one
        LimitChangeTelemetry.Publish(Kind, _options.Name, change.From, change.To, change.Reason, Milliseconds(change.WindowMedian), Milliseconds(change.Baseline), change.InFlight, change.Sequence, WatchId);
    }

    private double Milliseconds(double ticks) => ticks * 1000 / _time.TimestampFrequency;

    [Conditional("DEBUG")]
    private void AssertInvariants()
    {
        Debug.Assert(_lock.IsHeldByCurrentThread);
        Debug.Assert(_limit == LawLimit || (_limit < LawLimit && LawInSlowStart));
        Debug.Assert(_limit >= _options.MinLimit && _limit <= _options.MaxLimit);
        Debug.Assert(_peak >= _limit);
    }

    /// <summary>A change of the limit granted, and why (published outside the lock).</summary>
    private readonly record struct LimitChange(int From, int To, LimitChangeReason Reason, double WindowMedian, double Baseline, int InFlight, long Sequence);

    /// <summary>A completion kept until the first window has set the baseline.</summary>
    private readonly record struct HeldBackCompletion(long StartTimestamp, long Latency, bool Succeeded, int InFlight);
}
