using System.Diagnostics;

using FanOut.Execution;

namespace FanOut.Limits.Adaptive;

/// <summary>
/// The adaptive law on the bandwidth-delay product (BBR's model; docs/adaptive.md). The limit is what the downstream has
/// been seen to carry: the most answers per second times the latency without a queue (measured by drains, as BBR's
/// ProbeRTT and Envoy's pinned minRTT), with a little room (<see cref="AdaptiveLimitOptions.Headroom"/>). Slow start
/// doubles per round trip on answers that did not queue; after it, one decision per reading of every answer grows the
/// limit toward that target or cuts it to it; a "no" backs off, and growth goes on one permit per round trip (AIMD) with
/// spaced probes above the level that said no. Never touches a clock or a lock: the owning limit calls it under its lock.
/// </summary>
internal sealed class BandwidthDelayLaw
{
    /// <summary>Answers a reading takes after slow start (and a round trip at least): a rate within about a fifth.</summary>
    private const int ReadingAnswers = 32;

    /// <summary>The most of the target's room (<see cref="AdaptiveLimitOptions.Headroom"/> less 1) a reading's rate error may take off its rate: a heavy tail's (23%) took nearly all of 25%, so the target sat at the calls in flight, and a base read one standard error low left it below them for good (docs/adaptive.md, rule 3).</summary>
    private const double RoomTheRateErrorMayTake = 0.6;

    /// <summary>Answers a drain's cohort takes at most: a median within about an eighth on a tight downstream.</summary>
    private const int CohortAnswers = 2 * ReadingAnswers;

    /// <summary>Answers the latency without a queue is the median of: two drains' cohorts at least, so that one cohort read low by chance does not hold the target below what the downstream carries until the next drain.</summary>
    private const int PoolAnswers = 2 * CohortAnswers;

    /// <summary>Answers a reading takes in slow start and in a drain, half a reading: a decision every round or two at small limits.</summary>
    private const int ShortReadingAnswers = ReadingAnswers / 2;

    /// <summary>Readings the model remembers: the most answers per second is taken over them (BBR's window).</summary>
    private const int ModelReadings = 10;

    /// <summary>Slow start grows on an answer within this ratio of its reference; a cohort whose median is this many times the least queued (a queue of half a round is a queue): its held-back answers are not granted, and two such cohorts in a row end slow start.</summary>
    private const double QueuedRatio = 1.5;

    /// <summary>A steady reading whose median is this many times the latency without a queue read the downstream queued: the rates remembered from before are its past.</summary>
    private const double QueuedReadingRatio = 2;

    /// <summary>Standard errors of the two medians a queue test's ratio must be cleared by: a heavy tail's medians spread that far by chance.</summary>
    private const double QueueTestStandardErrors = 2;

    /// <summary>The most spread (standard deviation of the logs) a queue test allows for: a heavy tail's (p99 10x the median); a wider one is threads starved by the bodies themselves, whose queue the test must still see.</summary>
    private const double MostSpread = 1;

    /// <summary>The standard error of a sample median, in standard deviations per square root of the sample size.</summary>
    private static readonly double MedianStandardErrorFactor = Math.Sqrt(Math.PI / 2);

    /// <summary>An answer this many times faster than a reference set by the first round (counted at no less than the noise floor) is evidence that round was cold (connections opened, code compiled).</summary>
    private const double ColdRatio = 4;

    /// <summary>Answers of that evidence that prove the first round cold and begin slow start again: after a cold round every warm answer is one; on a heavy tail (p99 10x the median) one answer in hundreds beats the fastest of ten by 4x.</summary>
    private const int ColdAnswers = 3;

    /// <summary>Answers slow start again takes per permit above the level the cold first round reached (1.5x a round trip, not 2x): a slow "no" comes back after the whole doubling went out blind (fresh processes over HTTP at a cap of 20: 6-7% of calls refused in 4 runs of 10; at half, 0.3-4.2% in 20).</summary>
    private const int AnswersPerPermitAboveColdLevel = 2;

    /// <summary>Round trips' worth of answers between two drains (drains' cohorts, when larger): a drain runs at three quarters of the product for a round trip or two, so it costs about 1/64 of the throughput.</summary>
    private const int DrainSpacing = 32;

    /// <summary>A drain whose latency fell by this share of its level's fall (in logs) or more still queued: it goes on at half the level (a smooth knee's latency falls by less, and is measured where it is used).</summary>
    private const double DeeperDrainShare = 0.9;

    /// <summary>A drain whose level carried this share of the most rate read at its own latency (Little's law) still saturated the downstream: the geometric middle of the drain's gain and all of it.</summary>
    private static readonly double SaturatedDrainShare = Math.Sqrt(DrainGain);

    /// <summary>The least level a drain goes to: BBR's ProbeRTT keeps 4 packets, Envoy pins 3; below that a cohort takes too many round trips.</summary>
    private const int LeastDrainLevel = 4;

    /// <summary>A drain's level, as a share of the product: below what the downstream carries (the product reads up to a quarter high), so the queue empties.</summary>
    private const double DrainGain = 0.75;

    /// <summary>Slow start's evidence bound: an answer grows the limit only while more than half of it is in use.</summary>
    private const int InFlightFactor = 2;

    /// <summary>Round trips the limit holds at the level the downstream last said no at before it probes above it.</summary>
    private const int MinProbeSpacing = 2;

    /// <summary>The most round trips between two probes above a level that keeps saying no: the spacing doubles once, on a refused probe: clients sharing a cap converge only as often as they probe (docs/adaptive.md, "Independent clients").</summary>
    private const int MaxProbeSpacing = 2 * MinProbeSpacing;

    /// <summary>The first probe after a cut waits this many times the time by which the "no" came later than an answer: a level over the cap holds that much longer before its "no" is back, and where a refusal holds its place in service that time is lost to every call.</summary>
    private const int ProbeSpacingInNoLatencies = 32;

    /// <summary>Latency rises smaller than this are scheduling noise whatever their ratio (late timers, thread-pool hops).</summary>
    private static readonly TimeSpan NoiseFloor = TimeSpan.FromMilliseconds(2);

    private readonly AdaptiveLimitOptions _options;
    private readonly double _noiseFloor;
    private readonly double _longestProbeWait;
    private readonly long _frequency;

    /// <summary>The least share of a reading's rate its error leaves: <see cref="RoomTheRateErrorMayTake"/> of the room off it at most, and half.</summary>
    private readonly double _leastRateShare;

    // The reading being taken: every answer since the last decision.
    private readonly long[] _latencies;
    private int _answers;
    private double _latencySum;
    private long _readingStart = long.MinValue;
    private int _peakInFlight;

    // The reading's time between answers, and the part of it every permit granted was in use (the limit bound): a caller with
    // nothing to send for a while (a shared limit between two calls) reads its own idleness as the downstream's rate.
    private long _lastAnswerAt = long.MinValue;
    private long _timedSpan;
    private int _timedAnswers;
    private long _boundSpan;
    private int _boundAnswers;

    // The model: the last ModelReadings readings' rates, and the latency without a queue (the median of the last drains'
    // cohorts; before the first drain, the least median of slow start's readings).
    private readonly double[] _rates = new double[ModelReadings];
    private int _readings;
    private double _base;

    /// <summary>The answers of the last drains' cohorts (those still out counted as the slowest): the latency without a queue is their median.</summary>
    private readonly long[] _basePool = new long[PoolAnswers];
    private int _basePoolCount;

    /// <summary>The mean over the median of steady readings, averaged (Little's law needs the mean; a median is robust to rare slow answers).</summary>
    private double _meanOverMedian;

    /// <summary>The rate of the queued reading that began the drain under way (0: none began it).</summary>
    private double _rateBeforeDrain;

    /// <summary>Answers since the last drain, and the answers that drain's cohort took: drains are spaced by <see cref="DrainSpacing"/> of those.</summary>
    private int _answersSinceDrain;
    private int _drainAnswers = CohortAnswers;

    // Slow start.
    /// <summary>Slow start's reference for "did not queue": the fastest answer so far (a cold first round is outdone by the first warm answer).</summary>
    private double _reference = double.PositiveInfinity;

    /// <summary>When the first answer came in: items started before it are the first round, whose answers may all be cold.</summary>
    private long _firstAnswerAt = long.MaxValue;

    /// <summary>True while <see cref="_reference"/> was set by an item of the first round, and the answers since that beat it by <see cref="ColdRatio"/>.</summary>
    private bool _referenceFromFirstRound;
    private int _coldAnswers;

    /// <summary>The least median of slow start's cohorts: the latency without a queue until a drain.</summary>
    private double _slowStartLeastMedian = double.PositiveInfinity;

    /// <summary>The least geometric mean of two consecutive slow-start cohort medians (the first cohort's own): the reference of slow start's queue tests, since the least single median falls with every cohort judged (a shared limit's slow start judges dozens).</summary>
    private double _slowStartLeastPair = double.PositiveInfinity;
    private double _lastSlowStartMedian;

    /// <summary>The limit when slow start last judged a cohort.</summary>
    private int _judgedLevel;

    /// <summary>Answers the per-answer test held back from slow start's growth since the last cohort was judged: the next cohort's median decides.</summary>
    private int _heldBack;

    /// <summary>True when the last cohort judged queued: a queue persists into the next cohort (items started after that judgment), a stall does not.</summary>
    private bool _queueSeenOnce;

    /// <summary>The limit the cold first round reached without a "no" (0: no cold round): slow start again grows slower above it.</summary>
    private int _coldRoundLevel;
    private int _answersAboveColdLevel;

    /// <summary>The phase the drain under way hands over to: slow start again after a cold first round, else steady.</summary>
    private BandwidthDelayPhase _afterDrain = BandwidthDelayPhase.Steady;

    // The cohort: the first items started after it began, judged by their median (slow start's queue test, a drain's measure).
    // A drain: the limit below the product until its cohort's median is known.
    private long _cohortStart = long.MinValue;
    private int _cohortTarget = ShortReadingAnswers;
    private int _drainFrom;
    private long _cohortBase;
    private int _cohortSize = -1;
    private long _cohortEnd;
    private readonly long[] _cohort = new long[CohortAnswers];
    private int _cohortAnswered;

    /// <summary>The level a drain came from and the median read there (0: none): a drain whose latency falls in proportion to its level goes deeper.</summary>
    private double _drainedFromLevel;
    private double _drainedFromMedian;

    /// <summary>Answers so far, and items started so far as of the last answer: every item started has answered or is in flight.</summary>
    private long _answered;
    private long _started;

    // After a "no": the level that said no (0: none), growth per round trip below it, and spaced probes onto and above it.
    private int _ceiling;
    private double _growthCredit;
    private int _roundTripsAtCeiling;
    private int _probeSpacing = MinProbeSpacing;

    /// <summary>The permits the next probe adds above the level that said no.</summary>
    private int _probeStep = 1;

    /// <summary>When the last probe began, and the answers of items started since: a probe passed once a round at its level answered.</summary>
    private long _probedAt = long.MaxValue;
    private int _answersSinceProbe;

    /// <summary>How long the downstream's last "no" took: a probe is not judged passed before that much time.</summary>
    private long _rejectionLatency;
    private long _lastCutAt = long.MinValue;

    public BandwidthDelayLaw(AdaptiveLimitOptions options)
    {
        _options = options;
        _frequency = options.TimeProvider.TimestampFrequency;
        _noiseFloor = NoiseFloor.TotalSeconds * _frequency;
        _longestProbeWait = OverloadBackoff.MaxHonouredRetryAfter.TotalSeconds * _frequency;
        _leastRateShare = Math.Max(0.5, 1 - (RoomTheRateErrorMayTake * (options.Headroom - 1)));
        Limit = options.InitialLimit;

        // A reading spans a round trip, so it holds a limit's worth of answers and more; it closes when full all the same.
        _latencies = new long[Math.Clamp(4L * options.MaxLimit, ReadingAnswers, 4096)];
    }

    public int Limit { get; private set; }

    public BandwidthDelayPhase Phase { get; private set; }

    public bool InSlowStart => Phase == BandwidthDelayPhase.SlowStart;

    /// <summary>True when the last "no" came back later than an answer without a queue would have (none is slower before any answer).</summary>
    private bool SlowNo => Baseline > 0 && _rejectionLatency > Baseline;

    /// <summary>In slow start, true when it began again after a cold first round (only the cold round's drain hands back to slow start): its queue tests read against a drain's measure, so one queued cohort ends it.</summary>
    private bool SlowStartAgain => _coldRoundLevel > 0;

    /// <summary>The latency without a queue the model holds, in timestamp ticks (0: none yet); slow start's reference before any reading.</summary>
    public double Baseline => _base > 0 ? _base : double.IsFinite(_reference) ? _reference : 0;

    /// <summary>The median of the reading the last change was decided on, in timestamp ticks (0: none).</summary>
    public double ReadingMedian { get; private set; }

    /// <summary>What the model says the downstream carries, with the target's gain for room (0: nothing measured yet).</summary>
    public int Target => TargetAt(MostRate());

    /// <summary>A success, a plain failure or a "no" (<paramref name="overload"/>) of an item started at <paramref name="start"/>, with <paramref name="inFlight"/> calls (this one included) in flight of the <paramref name="granted"/> permits the owner gives (its limit as paced; -1: the law's limit).</summary>
    public LimitDecision OnAnswer(long start, long latency, bool succeeded, bool overload, int inFlight, long now, int granted = -1)
    {
        _started = ++_answered + inFlight - 1;
        var before = Limit;
        var decision = overload ? Rejected(start, inFlight, now)
            : Phase == BandwidthDelayPhase.Draining ? Drained(start, latency, now)
            : succeeded ? Judged(Answered(start, latency, inFlight, granted < 0 ? Limit : granted, now), start, latency, now)
            : LimitDecision.Hold(Limit);
        Debug.Assert(Limit >= _options.MinLimit && Limit <= _options.MaxLimit);
        Debug.Assert(decision.Limit == Limit && (Limit == before || decision.Reason != LimitChangeReason.Hold));
        return decision;
    }

    private LimitDecision Answered(long start, long latency, int inFlight, int granted, long now)
    {
        _firstAnswerAt = Math.Min(_firstAnswerAt, now);
        if (Phase == BandwidthDelayPhase.SlowStart && _referenceFromFirstRound && Uses(BandwidthDelayRules.ColdFirstRound) && ColdRatio * Math.Max(latency, _noiseFloor) < _reference)
        {
            if (++_coldAnswers == ColdAnswers)
            {
                // The first round was cold: the answers slow start grew on measured the start-up, not the downstream's pace, and
                // the backlog they let in hides the pace from every answer after. Forget what they read, measure the pace, and
                // begin slow start again (a heavy tail's drain read low left the steady rule cutting toward nothing).
                _reference = latency;
                _referenceFromFirstRound = false;
                ForgetRates();
                ReadingMedian = 0;
                _coldRoundLevel = Limit;
                return Drain(now, LimitChangeReason.QueueSeen, then: BandwidthDelayPhase.SlowStart);
            }
        }
        else if (Phase == BandwidthDelayPhase.SlowStart && latency < _reference)
        {
            _reference = latency;
            _referenceFromFirstRound = start < _firstAnswerAt;
        }

        var growth = Grow(start, latency, inFlight, now);
        if (_readingStart == long.MinValue)
        {
            _readingStart = now - latency;
        }

        _latencies[_answers++] = latency;
        _latencySum += latency;
        _peakInFlight = Math.Max(_peakInFlight, inFlight);
        if (_lastAnswerAt != long.MinValue && now > _lastAnswerAt)
        {
            // Since the last answer the calls in flight were this answer's count: none starts but as another ends. Bound within
            // one permit: on the real clock another worker may be giving its permit back while this answer is read.
            var span = now - _lastAnswerAt;
            var bound = inFlight + 1 >= granted;
            _timedSpan += span;
            _timedAnswers++;
            _boundSpan += bound ? span : 0;
            _boundAnswers += bound ? 1 : 0;
        }

        _lastAnswerAt = now;
        // A reading spans a round trip at least: answers of one round come back together, and a rate read over a fraction of
        // a round trip counts that burst as throughput.
        var size = Phase == BandwidthDelayPhase.Steady ? ReadingAnswers : ShortReadingAnswers;
        if ((_answers < size || now - _readingStart < Baseline) && _answers < _latencies.Length)
        {
            return growth;
        }

        var decided = Decide(now);
        return decided.Reason == LimitChangeReason.Hold && growth.Reason != LimitChangeReason.Hold ? new(Limit, growth.Reason) : decided;
    }

    /// <summary>An answer's reading decision, then, in slow start, its cohort's judgment: a change the judgment makes sets the limit last.</summary>
    private LimitDecision Judged(LimitDecision reading, long start, long latency, long now)
    {
        var judged = Phase == BandwidthDelayPhase.SlowStart ? JudgeSlowStartCohort(start, latency, now) : LimitDecision.Hold(Limit);
        return judged.Reason != LimitChangeReason.Hold ? judged : reading;
    }

    /// <summary>Growth on one answer: slow start's (one per answer that did not queue) or, below a level that said no, one per round trip.</summary>
    private LimitDecision Grow(long start, long latency, int inFlight, long now)
    {
        if (Limit >= _options.MaxLimit || (long)InFlightFactor * inFlight <= Limit)
        {
            return LimitDecision.Hold(Limit); // half the limit idle: nothing says more would be used
        }

        if (Phase == BandwidthDelayPhase.SlowStart)
        {
            var queued = latency > Math.Max(QueuedRatio * _reference, _reference + _noiseFloor);
            if (queued)
            {
                _heldBack++;
                return LimitDecision.Hold(Limit);
            }

            if (SlowStartAgain && Limit >= _coldRoundLevel && ++_answersAboveColdLevel % AnswersPerPermitAboveColdLevel != 0)
            {
                return LimitDecision.Hold(Limit); // beyond what the downstream was seen to take, a doubling goes out before a slow "no" is back
            }

            return Set(Limit + 1, LimitChangeReason.SlowStartGrowth);
        }

        if (start >= _probedAt)
        {
            _answersSinceProbe++;
        }

        if (Phase != BandwidthDelayPhase.Steady || _ceiling == 0 || (_growthCredit += 1.0 / Limit) < 1)
        {
            return LimitDecision.Hold(Limit);
        }

        // AIMD's additive half, one permit per round trip: clients sharing a downstream that says no converge to equal shares.
        _growthCredit = 0;
        if (Limit + 1 < _ceiling)
        {
            return Set(Limit + 1, LimitChangeReason.Growth);
        }

        // At the level that said no: a probe above it every few round trips, spaced wider while probes are refused.
        // After a slow "no", the first probe also waits out what a refused probe would cost, no longer than the longest pause
        // the limit honours (a "no" that is a client's timeout of minutes would keep the level that said no for hours).
        var firstSinceCut = _probedAt == long.MaxValue || _probedAt < _lastCutAt;
        var slowNoWait = SlowNo ? Math.Min(ProbeSpacingInNoLatencies * (_rejectionLatency - Baseline), _longestProbeWait) : 0;
        if (++_roundTripsAtCeiling < _probeSpacing || (firstSinceCut && Uses(BandwidthDelayRules.ProbesSpacedByNoLatency) && now - _lastCutAt < slowNoWait))
        {
            return LimitDecision.Hold(Limit);
        }

        _roundTripsAtCeiling = 0;

        // The last probe passed: a round of items started at its level answered, and no "no" came within the time a "no" takes
        // to come. The level that said no no longer holds.
        var passed = Limit >= _ceiling && _answersSinceProbe >= Limit && now - _probedAt >= _rejectionLatency;

        // A probe that passed doubles the next one's step, up to half the limit: room that came back (a capacity restored after
        // a long low) is regained in a few probes, not one permit per probe. A probe after a "no" tests the refused level.
        _probeStep = passed && Uses(BandwidthDelayRules.ProbeStepDoubles) ? Math.Min(2 * _probeStep, Math.Max(1, Limit / 2)) : 1;
        if (passed)
        {
            _probeSpacing = MinProbeSpacing;
            if (_basePoolCount == 0 && Uses(BandwidthDelayRules.DrainWhenProbePassesUnmeasured))
            {
                // No drain ever measured the latency without a queue (a "no" ended slow start): a downstream that now queues
                // rather than refuses is seen only by that latency. Measure it, and leave the probes.
                _ceiling = 0;
                return Drain(now, LimitChangeReason.Remeasure);
            }
        }

        _ceiling = Limit + _probeStep;
        _probedAt = now;
        _answersSinceProbe = 0;
        return Set(Limit + _probeStep, LimitChangeReason.Probe);
    }

    /// <summary>A reading is complete: the model takes its rate and, after slow start, the steady rule decides.</summary>
    private LimitDecision Decide(long now)
    {
        var answers = _latencies.AsSpan(0, _answers);
        answers.Sort();
        var median = (double)answers[answers.Length / 2];
        var duration = Math.Max(1, now - _readingStart);
        var spread = LogSpread(answers);

        // The rate less one standard error (the answers' coefficient of variation over the root of their count): the model
        // keeps the most of its readings, and the most of ten noisy readings reads about 1.5 standard errors high. It takes no
        // more than RoomTheRateErrorMayTake of the target's room (else the target sits at the calls in flight and the limit
        // can only fall), and at most half the rate.
        var rateError = Uses(BandwidthDelayRules.RateLessOneStandardError) ? Math.Sqrt(Math.Exp(spread * spread) - 1) / Math.Sqrt(answers.Length) : 0;
        var rate = answers.Length * (double)_frequency / duration * Math.Max(_leastRateShare, 1 - rateError);
        var level = _latencySum / duration;
        var mean = _latencySum / answers.Length;
        var filled = (long)InFlightFactor * _peakInFlight > Limit;
        // The rate while the limit bound, over the reading's (answers per time between answers, both): a reading partly idle
        // on the caller's side reads the downstream at its rate while busy. Only while no level has said no: a hard cap's
        // refusals bound the limit, and a slow "no" keeps what the model says was carried.
        var busy = Phase == BandwidthDelayPhase.Steady && _ceiling == 0 && _boundAnswers >= ShortReadingAnswers / 2 && Uses(BandwidthDelayRules.RateReadWhileTheLimitBinds)
            ? Math.Max(1, _boundAnswers / (double)_boundSpan / (_timedAnswers / (double)_timedSpan))
            : 1;
        StartReading(now);
        Remember(filled ? rate * busy : 0);
        if (Phase == BandwidthDelayPhase.SlowStart)
        {
            return LimitDecision.Hold(Limit); // slow start decides on cohorts (JudgeSlowStartCohort); its readings measure the rate
        }

        ReadingMedian = median;
        _answersSinceDrain += answers.Length;
        _meanOverMedian = _meanOverMedian == 0 ? mean / median : (0.75 * _meanOverMedian) + (0.25 * mean / median);
        return DecideSteady(now, level, filled, median, rate, spread, answers.Length);
    }

    /// <summary>Slow start's queue test, once per cohort of items started together: a cohort's median is biased neither by a batch's first answers (its fastest) nor by a call's last (its slowest), as a reading of answers as they come is.</summary>
    private LimitDecision JudgeSlowStartCohort(long start, long latency, long now)
    {
        var median = CohortMedian(start, latency, now);
        if (median == 0)
        {
            return LimitDecision.Hold(Limit);
        }

        var count = _cohortSize;
        var spread = LogSpread(_cohort.AsSpan(0, count)); // reads its median and lower quartile only, both answered
        BeginCohort(now, ShortReadingAnswers);
        ReadingMedian = median;
        var least = Uses(BandwidthDelayRules.PairedSlowStartReference) ? _slowStartLeastPair : _slowStartLeastMedian;
        // Only a cohort at a level not judged before moves the reference: at one level (the most limit, or growth held) every
        // cohort more lowers the least of them, with no queue gone, and a noisy one then reads as queued.
        var newLevel = Limit != _judgedLevel || !Uses(BandwidthDelayRules.ReferenceFromNewLevels);
        _judgedLevel = Limit;
        if (newLevel)
        {
            _slowStartLeastPair = Math.Min(_slowStartLeastPair, _lastSlowStartMedian > 0 ? Math.Sqrt(_lastSlowStartMedian * median) : median);
            _lastSlowStartMedian = median;
            _slowStartLeastMedian = Math.Min(_slowStartLeastMedian, median);
        }

        _base = _slowStartLeastMedian;
        var heldBack = _heldBack;
        _heldBack = 0;
        if (Above(median, least, QueuedRatio, spread, count))
        {
            // A queue, if the next cohort (items started after this one was judged) reads it too: a stall holds up the items
            // of its spell only. Slow start is over.
            if (Uses(BandwidthDelayRules.StallIsNotAQueue) && !_queueSeenOnce && !SlowStartAgain)
            {
                _queueSeenOnce = true;
                return LimitDecision.Hold(Limit);
            }

            return Drain(now, LimitChangeReason.QueueSeen);
        }

        _queueSeenOnce = false;
        if (heldBack > 0 && Uses(BandwidthDelayRules.HeldBackGrant))
        {
            // The cohort did not queue: the answers held back only fell in a noisy downstream's spread (few answers of a
            // lognormal come within 1.5x of the fastest), and each grows the limit as the others did; less the share of the
            // queue test's bar the median rose by: a smooth knee behind a heavy tail rises for rounds before the test can call it.
            var rise = Uses(BandwidthDelayRules.GrantInProportionToTheRise) ? Math.Max(0, Math.Log(median / least)) / QueueBar(QueuedRatio, spread, count) : 0;
            var growth = (int)Math.Round(heldBack * Math.Max(0, 1 - rise));
            if (growth > 0)
            {
                return Set(Limit + growth, LimitChangeReason.SlowStartGrowth);
            }
        }

        return LimitDecision.Hold(Limit);
    }

    /// <summary>After slow start, once per reading: cut to the target when the calls in flight on average were above it, else grow toward it.</summary>
    private LimitDecision DecideSteady(long now, double level, bool filled, double median, double rate, double spread, int answers)
    {
        // Only on a measured latency without a queue: slow start's least median reads low on a heavy tail (7 ms of 20), and a
        // "no" ends slow start without a drain.
        var measured = _basePoolCount > 0 || !Uses(BandwidthDelayRules.CutOnMeasuredBase);

        // A reading twice the latency without a queue (by two standard errors) queued: it read the downstream at what it
        // carries, and higher rates remembered are its past (a degrading downstream's rate falls as its latency rises).
        var queued = measured && Above(median, _base, QueuedReadingRatio, spread, answers) && Uses(BandwidthDelayRules.QueuedReadingForgetsRates);
        if (queued)
        {
            ForgetRates();
            Remember(rate);
        }

        var target = Target;
        if (measured && target > 0 && level > target && Limit > target)
        {
            if (queued && Uses(BandwidthDelayRules.QueuedReadingRemeasures))
            {
                // Twice the latency without a queue: a queue, or a downstream that got slower (a drift). Cut on the old latency,
                // a drifted downstream's limit halves every reading (36, 18, 9, 6, 3, 1 on 8 slots); measure it first, and
                // the drain's end takes this reading's rate at the latency it measures.
                return Drain(now, LimitChangeReason.QueueSeen, rate, level);
            }

            // More in flight than the downstream carries with room: the rest only queued (Little's law).
            return Set(Math.Max(target, Limit / 2), LimitChangeReason.QueueSeen);
        }

        if (_ceiling == 0 && _answersSinceDrain >= DrainSpacing * _drainAnswers && Limit > Math.Max(_options.MinLimit, Product()))
        {
            return Drain(now, LimitChangeReason.Remeasure, fromLevel: level);
        }

        if (_ceiling == 0 && filled && target > Limit && !queued)
        {
            // Room in the model and no queue: grow toward it by a quarter a reading (BBR's probing gain), so a queue shows
            // before the next step; the product grows with the rate each step buys, so an elastic downstream is found at
            // 1.25x a reading.
            return Set(Math.Min(target, Limit + Math.Max(1, Limit / 4)), LimitChangeReason.Growth);
        }

        return LimitDecision.Hold(Limit);
    }

    /// <summary>An answer during a drain: its cohort (<see cref="CohortMedian"/>) is of items started after it began, since those started before queued behind the level it left.</summary>
    private LimitDecision Drained(long start, long latency, long now)
    {
        var median = CohortMedian(start, latency, now);
        if (median == 0)
        {
            return LimitDecision.Hold(Limit);
        }

        var level = Limit;
        var fellInProportion = _drainedFromMedian > 0 && Math.Log(median / _drainedFromMedian) < DeeperDrainShare * Math.Log(level / _drainedFromLevel);
        var carried = MostRate() * median * Math.Max(1, _meanOverMedian) / _frequency; // 0: no rate read yet
        var carriedAll = carried > 0 && level >= SaturatedDrainShare * carried && Uses(BandwidthDelayRules.SaturatedDrainGoesDeeper);
        if (level > _options.MinLimit && Uses(BandwidthDelayRules.DeeperDrain) && (fellInProportion || carriedAll))
        {
            // Latency fell with the level, nearly in proportion, or the level still carried the most rate read (Little's law:
            // the calls only queued, as on shared cores, where latency is in proportion to the calls at every level above the
            // cores): the drain's level still queues. Drain deeper.
            _drainedFromMedian = median;
            _drainedFromLevel = level;
            _drainFrom = 0; // the level it left queued: the model's target, not that level, is where the drain ends
            BeginCohort(now, _drainAnswers);
            return Set(level / 2, LimitChangeReason.Remeasure);
        }

        var before = _base;
        var slower = before > 0 && median > QueuedRatio * before && Uses(BandwidthDelayRules.NewBaseForgetsRates);
        if (slower)
        {
            // The downstream got slower since the rates and the pool's cohorts were read (a degrading one: its rate falls as
            // its latency rises): a rate and a latency read at different times make no product, and the old cohorts' median
            // would hold the latency without a queue near the old one for several drains. The next readings give the rate.
            ForgetRates();
            _basePoolCount = 0;
        }

        PoolCohort(_cohort.AsSpan(0, _cohortAnswered), _cohortSize);
        _base = _basePool[_basePoolCount / 2];
        ReadingMedian = median;
        _readingStart = now;
        if (_afterDrain == BandwidthDelayPhase.SlowStart)
        {
            return BeginSlowStartAgain(now, median);
        }

        var settled = Math.Max(_drainFrom, Target);
        if (_rateBeforeDrain > 0)
        {
            // A drain a queued reading began: that reading's rate at the latency just measured, once; the model's rates are
            // read again at this latency.
            settled = Math.Max(_drainFrom, TargetAt(_rateBeforeDrain));
            ForgetRates();
            _rateBeforeDrain = 0;
        }

        Phase = BandwidthDelayPhase.Steady;
        // Never below the level the drain ran at: with its rates forgotten (a slower downstream) the model holds no target.
        return Set(Math.Max(settled, level), LimitChangeReason.RemeasureDone);
    }

    /// <summary>After a cold first round's drain: slow start from the initial limit, its queue tests against the drain's <paramref name="median"/>.</summary>
    private LimitDecision BeginSlowStartAgain(long now, double median)
    {
        Phase = BandwidthDelayPhase.SlowStart;
        _slowStartLeastPair = _slowStartLeastMedian = _lastSlowStartMedian = median;
        _judgedLevel = Limit;
        _queueSeenOnce = false;
        _heldBack = 0;
        BeginCohort(now, ShortReadingAnswers);
        return Set(_options.InitialLimit, LimitChangeReason.RemeasureDone);
    }

    /// <summary>
    /// Takes an answer into the cohort (the first items started after it began) and returns its median once known (0: not
    /// yet): once more than half of it answered and every item still out has been out longer than that median, so neither
    /// the fastest answers (a batch's first) nor the slowest (a call's last) bias it. The answers so far stay sorted.
    /// </summary>
    private double CohortMedian(long start, long latency, long now)
    {
        // Not at the instant it began: the items counted started at that instant too, and a cohort that ends where it begins
        // holds none of them (on a coarse or fake clock a judgment and the next close share a timestamp: slow start stalled).
        if (_cohortSize < 0 && _started - _cohortBase >= _cohortTarget && now > _cohortStart)
        {
            CloseCohort((int)(_started - _cohortBase), now);
        }

        // An answer of an item outside the cohort adds nothing, but still tells the time: the count of starts is read from
        // calls in flight, and one counted too many would otherwise keep the cohort open once all of it had answered.
        if (start >= _cohortStart && (_cohortSize < 0 || start < _cohortEnd) && _cohortAnswered < _cohort.Length)
        {
            _cohort[_cohortAnswered++] = latency;
            if (_cohortSize < 0 && _cohortAnswered >= _cohortTarget)
            {
                CloseCohort(_cohortAnswered, now); // starts counted short (canceled items never answer): the cohort is the answers so far
            }
        }

        if (_cohortSize < 0 || 2 * _cohortAnswered <= _cohortSize)
        {
            return 0;
        }

        var answered = _cohort.AsSpan(0, _cohortAnswered);
        answered.Sort();
        var median = answered[_cohortSize / 2];
        return _cohortAnswered < _cohortSize && median > now - _cohortEnd ? 0 : Math.Max(1, median); // an item still out may yet answer faster
    }

    private void BeginCohort(long now, int size)
    {
        _cohortBase = _started;
        _cohortSize = -1;
        _cohortAnswered = 0;
        _cohortStart = now;
        _cohortTarget = size;
    }

    private void CloseCohort(int size, long now)
    {
        _cohortSize = Math.Min(size, _cohort.Length);
        _cohortEnd = now;
    }

    /// <summary>
    /// Adds a cohort of <paramref name="size"/> items (<paramref name="answered"/> sorted, the rest still out and counted as the
    /// slowest) to the pool, kept sorted: the older cohorts make room by keeping evenly spaced ranks of theirs, so what they
    /// keep is their distribution, not their slowest answers.
    /// </summary>
    private void PoolCohort(ReadOnlySpan<long> answered, int size)
    {
        size = Math.Min(Math.Max(size, answered.Length), _basePool.Length);
        var kept = Math.Min(_basePoolCount, _basePool.Length - size);
        for (var i = 0; i < kept; i++)
        {
            _basePool[i] = _basePool[(int)((i + 0.5) * _basePoolCount / kept)];
        }

        var count = kept;
        for (var i = 0; i < size; i++)
        {
            _basePool[count++] = i < answered.Length ? answered[i] : long.MaxValue;
        }

        _basePoolCount = count;
        Array.Sort(_basePool, 0, count);
    }

    /// <summary>True when a reading's <paramref name="median"/> (of <paramref name="answers"/> answers whose logs spread <paramref name="spread"/>) is above <paramref name="ratio"/> times <paramref name="reference"/> by the noise floor and by two standard errors of the two medians (a heavy tail's readings spread that far by chance).</summary>
    private bool Above(double median, double reference, double ratio, double spread, int answers) =>
        median - reference > _noiseFloor && Math.Log(median / reference) > QueueBar(ratio, spread, answers);

    /// <summary>The queue test's bar, in logs: <paramref name="ratio"/> and two standard errors of two medians of <paramref name="answers"/> answers whose logs spread <paramref name="spread"/>.</summary>
    private static double QueueBar(double ratio, double spread, int answers) =>
        Math.Log(ratio) + (QueueTestStandardErrors * MedianStandardErrorFactor * Math.Min(spread, MostSpread) * Math.Sqrt(2.0 / answers));

    /// <summary>The standard deviation of the logs of sorted <paramref name="answers"/>, from their lower quartile and median: robust to a stray answer and to answers still out (a drain's, counted as the slowest).</summary>
    private static double LogSpread(ReadOnlySpan<long> answers) =>
        Math.Log((double)Math.Max(1, answers[answers.Length / 2]) / Math.Max(1, answers[answers.Length / 4])) / 0.6745;

    /// <summary>Drops the limit below the product for one cohort of items started from now: its median is the latency without a queue; <paramref name="queuedRate"/> and <paramref name="fromLevel"/> are the rate and the calls in flight on average of the reading that began it (0: none), and <paramref name="then"/> the phase it hands over to.</summary>
    private LimitDecision Drain(long now, LimitChangeReason reason, double queuedRate = 0, double fromLevel = 0, BandwidthDelayPhase then = BandwidthDelayPhase.Steady)
    {
        Debug.Assert(then != BandwidthDelayPhase.Draining);
        _afterDrain = then;
        _rateBeforeDrain = queuedRate;
        var target = Target;
        _drainFrom = target > 0 ? target : Limit; // with no rate read yet, the drain goes back to where it left
        _drainedFromLevel = Math.Max(Limit, fromLevel); // the calls its median was read at: a backlog of a higher limit's keeps them above this one
        _drainedFromMedian = ReadingMedian;
        _answersSinceDrain = 0;
        StartReading(long.MinValue);
        Phase = BandwidthDelayPhase.Draining;
        var level = Clamp(Math.Max(LeastDrainLevel, (int)(DrainGain * Product())));
        _drainAnswers = Math.Clamp(4 * level, ShortReadingAnswers, CohortAnswers);
        BeginCohort(now, _drainAnswers);
        return Set(Math.Min(Limit, level), reason);
    }

    /// <summary>
    /// True when a "no" to the item started at <paramref name="start"/> is the first answer to a probe: sent at or above the
    /// level that said no, after the probe began and before any cut since. The probe asked for that answer.
    /// </summary>
    public bool AnswersAProbe(long start) => _ceiling > 0 && _probedAt != long.MaxValue && _probedAt > _lastCutAt && start >= _probedAt;

    /// <summary>A "no": multiplicative back-off once per cut (a "no" to an item started before the last cut is already answered by it).</summary>
    private LimitDecision Rejected(long start, int inFlight, long now)
    {
        _rejectionLatency = now - start;
        if (Uses(BandwidthDelayRules.SlowNoKeepsWhatWasCarried) && SlowNo)
        {
            // A "no" slower than an answer tells of the downstream when its call arrived, and the calls in flight now may be the
            // refusals themselves (a "no" that holds its place in service): read them as no fewer than a back-off of what the
            // downstream carried.
            inFlight = Math.Max(inFlight, (int)(_options.BackoffRatio * Carried()) + 1);
        }

        var level = Clamp(inFlight);
        if (start < _lastCutAt)
        {
            // Stale: no new back-off, but the downstream took no more than the calls still in flight. The level that said no
            // stays the burst's: beside other clients those calls are only this client's part of it (docs/adaptive.md, rule 5).
            return Set(Math.Min(Limit, Clamp(inFlight - 1)), LimitChangeReason.Overload);
        }

        if (_ceiling > 0 && level >= _ceiling)
        {
            _probeSpacing = Math.Min(2 * _probeSpacing, MaxProbeSpacing); // a probe refused again: wait longer before the next
        }
        else if (_ceiling > 0 && Uses(BandwidthDelayRules.ReprobeWhenRoomTaken))
        {
            _probeSpacing = MinProbeSpacing; // a "no" below the level that said no: another client took the room, so probe for it soon
        }

        _ceiling = level;
        _roundTripsAtCeiling = 0;
        _growthCredit = 0;
        _lastCutAt = now;
        StartReading(long.MinValue);
        Phase = BandwidthDelayPhase.Steady;
        // The refused call was one too many: back off from the limit less it. A probe refused at L + 1 then leaves L for less
        // than L, so a client holding a small cap makes room (cut from L + 1, it only undid the probe: a second client starved).
        var refused = Uses(BandwidthDelayRules.CutBelowTheRefusedCall) ? 1 : 0;
        var backedOff = Math.Min((int)((Limit - refused) * _options.BackoffRatio), inFlight - 1);
        return Set(Clamp(Math.Min(backedOff, Limit - 1)), LimitChangeReason.Overload);
    }

    /// <summary>Begins a reading at <paramref name="at"/> (<see cref="long.MinValue"/>: at the start of the next answer's item).</summary>
    private void StartReading(long at)
    {
        _answers = 0;
        _latencySum = 0;
        _peakInFlight = 0;
        _timedSpan = 0;
        _timedAnswers = 0;
        _boundSpan = 0;
        _boundAnswers = 0;
        _readingStart = at;
    }

    private void Remember(double rate) => _rates[_readings++ % ModelReadings] = rate;

    /// <summary>Drops the rates the model keeps: they describe a downstream that is no longer there.</summary>
    private void ForgetRates()
    {
        Array.Clear(_rates);
        _readings = 0;
    }

    /// <summary>The bandwidth-delay product: the most answers per second times the latency without a queue, times the mean over the median.</summary>
    private double Product() => ProductAt(MostRate());

    /// <summary>What the downstream was seen to carry: the most rate times the latency without a queue, or slow start's reference before a drain measured it.</summary>
    private double Carried() => MostRate() * Baseline / _frequency * Math.Max(1, _meanOverMedian);

    /// <summary>The bandwidth-delay product at <paramref name="rate"/> answers per second: that rate times the latency without a queue, times the mean over the median.</summary>
    private double ProductAt(double rate) => rate * _base / _frequency * Math.Max(1, _meanOverMedian);

    /// <summary>The target at <paramref name="rate"/>: its product with the target's room (0: nothing measured yet).</summary>
    private int TargetAt(double rate)
    {
        var product = ProductAt(rate);
        return product <= 0 ? 0 : Clamp((int)Math.Ceiling(_options.Headroom * product));
    }

    /// <summary>The most answers per second the model remembers.</summary>
    private double MostRate()
    {
        // The most of ten noisy rates reads high (10-21% on small lognormal pools): older readings count in consecutive pairs
        // (their geometric mean), and only the newest stands alone, so a rate that rose is followed at once.
        var kept = Math.Min(_readings, ModelReadings);
        var paired = Uses(BandwidthDelayRules.PairedRates);
        var most = paired && kept > 0 ? _rates[(_readings - 1) % ModelReadings] : 0.0;
        for (var age = 1; age <= kept; age++)
        {
            var rate = _rates[(_readings - age) % ModelReadings];
            var older = age < kept ? _rates[(_readings - age - 1) % ModelReadings] : 0;
            most = Math.Max(most, !paired ? rate : rate > 0 && older > 0 ? Math.Sqrt(rate * older) : 0);
        }

        return most;
    }

    private LimitDecision Set(int limit, LimitChangeReason reason)
    {
        limit = Clamp(limit);
        if (limit == Limit)
        {
            return LimitDecision.Hold(Limit);
        }

        Limit = limit;
        return new(limit, reason);
    }

    private int Clamp(int limit) => Math.Clamp(limit, _options.MinLimit, _options.MaxLimit);

    /// <summary>False when the ablation left <paramref name="rule"/> out.</summary>
    public bool Uses(BandwidthDelayRules rule) => (_options.RulesLeftOut & rule) == 0;
}

/// <summary>Which rules of <see cref="BandwidthDelayLaw"/> decide: the law alone changes it.</summary>
internal enum BandwidthDelayPhase
{
    /// <summary>One permit per answer that did not queue, until a reading meets a queue or a "no"; a cold first round, once proved, drains and slow start begins again.</summary>
    SlowStart,

    /// <summary>The limit below the product until the median of a cohort of items started in it is known: the latency without a queue.</summary>
    Draining,

    /// <summary>One decision per reading toward the product's target; after a "no", one permit per round trip and spaced probes.</summary>
    Steady,
}
