using System.Diagnostics;

using FanOut.Diagnostics;
using FanOut.Execution;
using FanOut.Limits.Adaptive;

namespace FanOut;

/// <summary>
/// The adaptive limit: applies the decisions of <see cref="BandwidthDelayLaw"/> (fed every completion under this class's
/// lock) and enforces them as permits, at the pace <see cref="SlowStartPacer"/> grants slow start's growth. Only answers move
/// the law; its two timers grant the paced growth and end a Retry-After pause (see <see cref="Pause"/>). Each change is
/// published with its reason (<see cref="LimitChangeReason"/>). See docs/adaptive.md.
/// </summary>
internal sealed class AdaptiveConcurrencyLimit : ConcurrencyLimit
{
    private readonly AdaptiveLimitOptions _options;
    private readonly TimeProvider _time;
    private readonly Func<Exception, bool> _isOverload;
    private readonly BandwidthDelayLaw _law;

    private readonly SlowStartPacer _pacer;

    /// <summary>Grants slow start's paced growth when it is due (see <see cref="OnPaceTimer"/>).</summary>
    private readonly LimitTimer _paceTimer;

    /// <summary>Ends a Retry-After pause (see <see cref="OnPauseTimer"/>).</summary>
    private readonly LimitTimer _pauseTimer;

    /// <summary>Guards the law; user code (the overload test) runs before it is taken.</summary>
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

    /// <summary>True while a Retry-After pause is on: <see cref="Current"/> is <see cref="_pauseRoom"/>.</summary>
    private volatile bool _paused;

    /// <summary>
    /// The limit during a pause: 0, or 1 once every call sent before it has answered and the one call that tests it may go
    /// (under the lock; 0 again once that call was not answered). See <see cref="TestedPause"/>.
    /// </summary>
    private volatile int _pauseRoom;

    /// <summary>True once this pause's test is open: the next completion is the test call's, the only call out (under the lock).</summary>
    private bool _testOpened;

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
        _law = new BandwidthDelayLaw(options);

        _pacer = new SlowStartPacer(options.InitialLimit, options.SlowStartPace, _time.TimestampFrequency);
        _paceTimer = new LimitTimer(_time, static s => ((AdaptiveConcurrencyLimit)s!).OnPaceTimer(), this);
        _pauseTimer = new LimitTimer(_time, static s => ((AdaptiveConcurrencyLimit)s!).OnPauseTimer(), this);
        _limit = options.InitialLimit;
        _peak = options.InitialLimit;
        FanOutMetrics.RecordLimit(this);
    }

    /// <summary>The law's limit, or while a Retry-After pause is on 0 (or 1 for the call that tests it).</summary>
    public override int Current => _paused ? _pauseRoom : _limit;

    public override int Peak => Volatile.Read(ref _peak);

    public override string Kind => "adaptive";

    public override string? Name => _options.Name;

    internal override LimitStateReading ReadState()
    {
        lock (_lock)
        {
            var latency = _answered == 0 ? -1 : Milliseconds((double)_answeredLatency / _answered);
            _answeredLatency = _answered = 0;
            return new(Current, InFlight, Waiting, latency, Milliseconds(_law.Baseline), Volatile.Read(ref _overloads), _pauses, _changes);
        }
    }

    /// <summary>The uncontended latency the limit compares against; <see cref="TimeSpan.Zero"/> until measured.</summary>
    internal TimeSpan Baseline
    {
        get
        {
            lock (_lock)
            {
                return TimeSpan.FromSeconds(_law.Baseline / _time.TimestampFrequency);
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

    public override int MaxCurrent => _options.MaxLimit;

    /// <summary>Synchronous bodies gain nothing from more workers than cores, whatever the limit allows asynchronous ones.</summary>
    internal override int WorkerHint => Math.Min(_limit, Environment.ProcessorCount);

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
        else if (_paused)
        {
            TestedPause(outcome);
        }

        Learn(startTimestamp, outcome);
    }

    /// <summary>
    /// A completion during a pause that was not a "no". Once every call sent before the pause has answered, one call tests
    /// it: a downstream that refuses every call (a storm, maintenance) refuses it too, and the pause runs to its end; one
    /// that answers it refused only the calls beyond its room (a cap whose 429s carry a Retry-After), and the pause ends
    /// now, the law's back-off being the answer to that "no" (docs/adaptive.md, rule 6).
    /// </summary>
    private void TestedPause(ItemOutcome outcome)
    {
        LimitChange change = default;
        var lifted = false;
        lock (_lock)
        {
            AssertInvariants();
            if (!_paused)
            {
                return;
            }

            if (_testOpened)
            {
                // The test call: the test opens once no other call is out, and the pause's room is 1 at most.
                lifted = outcome == ItemOutcome.Succeeded;
                _paused = !lifted;
                _pauseRoom = 0;
                if (lifted)
                {
                    change = new(0, _limit, LimitChangeReason.PauseLifted, 0, 0, InFlight, ++_changes);
                }
            }
            else
            {
                OpenTheTest();
            }
        }

        if (lifted)
        {
            OnCurrentChanged(); // the waiters the law's limit admits are granted
            Tell(change);
        }
        else if (_pauseRoom > 0)
        {
            OnCurrentChanged(); // a waiter may take the test call once this attempt's permit is back
        }
    }

    /// <summary>Lets one call test the pause once the call completing now is the last one sent before it (under the lock; a completion is told before its permit is back).</summary>
    private void OpenTheTest()
    {
        if (!_testOpened && InFlight <= 1 && _law.Uses(BandwidthDelayRules.PauseTestedByOneCall))
        {
            _testOpened = true;
            _pauseRoom = 1;
        }
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
            if (!_paused && hint > TimeSpan.Zero && startTimestamp > _pauseStart && _law.Uses(BandwidthDelayRules.RefusedProbeDoesNotPause) && _law.AnswersAProbe(startTimestamp))
            {
                return false; // the "no" the probe asked for: the law backs off from it, and only the refused item waits out its hint
            }

            var test = _paused && _testOpened;
            if (test)
            {
                _pauseRoom = 0; // the test call was refused too: the downstream refuses every call, and the pause runs on
            }

            covered = test || (startTimestamp <= _pauseStart && (_paused || hint > TimeSpan.Zero));
            if (_paused && !test)
            {
                OpenTheTest(); // a call sent before the pause has answered: the last of them opens the test
            }

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
                    _testOpened = false;
                    _pauseRoom = 0;
                    OpenTheTest();
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

    /// <summary>What the law learns from one completion a pause does not cover: every answer goes to it, and it decides.</summary>
    private void Learn(long startTimestamp, ItemOutcome outcome)
    {
        if (outcome == ItemOutcome.Canceled)
        {
            return; // latency and failures of a canceled run describe the cancellation, not the downstream
        }

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

            var decision = _law.OnAnswer(startTimestamp, now - startTimestamp, succeeded, outcome == ItemOutcome.Overloaded, inFlight, now, Current);
            if (decision.Reason != LimitChangeReason.Hold)
            {
                _reason = decision.Reason;
                _reasonMedian = _law.ReadingMedian;
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

    /// <summary>
    /// Makes the law's limit the limit everyone reads, at the pace slow start's growth is granted (under the lock). Returns
    /// the change, with the ticks until the pace grants more (0: the law's limit is granted).
    /// </summary>
    private LimitChange Publish(long now, int inFlight, out long paceDue)
    {
        var before = _limit;
        var limit = _pacer.Follow(_law.Limit, _law.InSlowStart, _law.Baseline, now, out paceDue);

        _limit = limit;
        _pacing = paceDue > 0;
        if (limit > _peak)
        {
            Volatile.Write(ref _peak, limit);
        }

        // A paced grant of growth decided earlier is slow start's, whatever the law decided since.
        var reason = limit > before && _law.InSlowStart && limit < _law.Limit ? LimitChangeReason.SlowStartGrowth : _reason;
        return new(before, limit, reason, _reasonMedian, _law.Baseline, inFlight, limit != before ? ++_changes : 0);
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
        Debug.Assert(_limit == _law.Limit || (_limit < _law.Limit && _law.InSlowStart));
        Debug.Assert(_limit >= _options.MinLimit && _limit <= _options.MaxLimit);
        Debug.Assert(_peak >= _limit);
    }

    /// <summary>A change of the limit granted, and why (published outside the lock).</summary>
    private readonly record struct LimitChange(int From, int To, LimitChangeReason Reason, double WindowMedian, double Baseline, int InFlight, long Sequence);
}
