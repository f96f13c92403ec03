using System.Diagnostics;

namespace FanOut.Limits.Adaptive;

/// <summary>
/// The adaptive limit's decisions over an explicit <see cref="LawPhase"/>: slow start (one permit per uncontended answer),
/// then a latency band around the baseline (grow below it, hold inside, back off in proportion above), a multiplicative
/// back-off on overload with additive, spaced growth above its level, and re-measurement of a thin or shared baseline.
/// Never touches a clock or a lock (the owning limit calls it under its lock). Rules, evidence and constants: docs/adaptive.md.
/// </summary>
internal sealed class AdaptiveControlLaw
{
    /// <summary>The most items of the first window, which seeds the baseline unconditionally (the items served first queue least).</summary>
    internal const int FirstWindowSamples = 4;

    /// <summary>Slow start's evidence bound: an answer grows the limit only while more than half of it is in use.</summary>
    private const int InFlightFactor = 2;

    /// <summary>Windows the limit holds at the level an overload was seen at before it probes one step above it.</summary>
    internal const int MinProbeSpacing = 2;

    /// <summary>The most windows between two probes above a level that keeps rejecting (the spacing doubles per failed probe).</summary>
    internal const int MaxProbeSpacing = 8;

    /// <summary>Limits up to this are taken as uncontended until measured otherwise: re-measurement after slow start starts here.</summary>
    internal const int AssumedUncontendedLimit = 2;

    /// <summary>Limit levels slow start remembers, to know the limit an item started under.</summary>
    private const int HistoryCapacity = 64;

    /// <summary>Slow start records a level when the limit has grown by this factor since the last one (a level read back is never above the real one).</summary>
    private const double HistoryStep = 1.25;

    /// <summary>The fewest pooled latencies the slow-start queue test needs (a quartile of fewer means nothing).</summary>
    private const int MinPoolForQueueTest = 3;

    /// <summary>The most latencies one slow-start round adds to the pool, so the low rounds (certainly uncontended) keep most of the weight.</summary>
    private const int SlowStartRoundShare = 16;

    /// <summary>An inconclusive slow-start round is extended until it holds this many latencies or two rounds' worth.</summary>
    private const int HoldSamples = 32;

    /// <summary>Standard errors the median must rise above the growth threshold by to end slow start.</summary>
    private const double QueueTestStandardErrors = 2;

    /// <summary>The standard error of a sample median, in standard deviations per square root of the sample size (sqrt(pi / 2)).</summary>
    private const double MedianStandardErrorFactor = 1.2533;

    /// <summary>The most slow start's exit may divide the limit by (a small round's ratio is noisy).</summary>
    private const int MaxSlowStartExitCut = 4;

    /// <summary>The most one window's gradient back-off may divide the limit by.</summary>
    private const int MaxBackoffCut = 2;

    /// <summary>The largest growth per window after slow start, as a fraction of the limit (when no queue shows at all).</summary>
    private const double MaxGrowthFraction = 0.25;

    /// <summary>After slow start, a window shorter than MinWindowSamples decides early only when it reads at or below this ratio (and grows).</summary>
    private const double ClearlyUncontended = 1.0;

    /// <summary>A slow-start round this many times faster than the baseline proves the first window cold (at 2, a stalled or heavy-tailed first window fired it too).</summary>
    private const double ColdBaselineRatio = 4;

    /// <summary>Latency rises smaller than this are scheduling noise whatever their ratio (late timers, thread-pool hops under load).</summary>
    internal static readonly TimeSpan NoiseFloor = TimeSpan.FromMilliseconds(2);

    private readonly AdaptiveLimitOptions _options;

    /// <summary>The re-measurement of the baseline after slow start: what the pin measured (the law decides when to pin and where the limit goes).</summary>
    private readonly BaselineRemeasurement _remeasurement;

    /// <summary><see cref="NoiseFloor"/> in timestamp ticks.</summary>
    private readonly double _noiseFloor;

    /// <summary>Below this latency ratio the limit grows; between it and the tolerance it holds.</summary>
    private readonly double _growBelow;

    /// <summary>Set by the round that found the first window cold: the baseline it reseeded from a round above the knee is re-measured, as a thin one is.</summary>
    private bool _coldBaseline;

    /// <summary>The highest limit slow start found uncontended: windows at half of it or less refresh the baseline pool.</summary>
    private int _cleanLimit;

    /// <summary>The highest slow-start level under which at least half a limit's worth of items completed without queueing.</summary>
    private int _verifiedLimit;

    /// <summary>When slow start's limit changed, in timestamp ticks, oldest first (with <see cref="_historyLimits"/>).</summary>
    private readonly long[] _historyTimes = new long[HistoryCapacity];

    /// <summary>The limit from the matching <see cref="_historyTimes"/> entry on.</summary>
    private readonly int[] _historyLimits = new int[HistoryCapacity];

    /// <summary>Items started under the matching <see cref="_historyTimes"/> entry that completed without queueing.</summary>
    private readonly int[] _historyClean = new int[HistoryCapacity];

    private int _historyCount;

    /// <summary>The limit when the current slow-start round (window) began: its size, while answers grow the limit.</summary>
    private int _roundLimit;

    /// <summary>The level of the round that ended slow start by reading a queue (0: none, refuted or overtaken): a clean window there refutes it.</summary>
    private int _exitLevel;

    /// <summary>The limit a step after slow start was taken from (0: none): a growth, or a knee test's step down.</summary>
    private int _steppedFrom;

    /// <summary>The limit that step went to: a step down is judged only by a window that ran there.</summary>
    private int _steppedTo;

    /// <summary>The median latency of the window that decided that step, in timestamp ticks.</summary>
    private double _latencyBeforeStep;

    /// <summary>The samples that window held.</summary>
    private int _samplesBeforeStep;

    /// <summary>A level a step down from cost throughput (0: none): windows do not step below it until it lapses after <see cref="MaxProbeSpacing"/> windows or a back-off.</summary>
    private int _kneeFloor;

    /// <summary>Windows held at <see cref="_kneeFloor"/>: it lapses after <see cref="MaxProbeSpacing"/> of them, as at a probe.</summary>
    private int _windowsAtFloor;

    /// <summary>The last level that rejected, or that a growth bought no throughput at (0: none): growth below it is additive, onto it a spaced probe.</summary>
    private int _overloadCeiling;

    /// <summary>True when <see cref="_overloadCeiling"/> is a level a step showed to buy no throughput, not one that rejected.</summary>
    private bool _ceilingAtKnee;

    /// <summary>Windows decided at or above <see cref="_overloadCeiling"/> since the limit last grew there or backed off.</summary>
    private int _windowsAtCeiling;

    /// <summary>Windows to hold at the ceiling before the next probe above it: doubles when a probe is rejected.</summary>
    private int _probeSpacing = MinProbeSpacing;

    /// <summary>Growth above the ceiling per window: 1 for a probe, doubling while probes pass (the downstream got bigger).</summary>
    private int _probeStep = 1;

    /// <summary>The latency ratio of the last window after slow start (0: none): a window far above the band right after one within it is a suspected stall.</summary>
    private double _previousRatio;

    /// <summary>The median latency of the window the last <see cref="Decide"/> read, in timestamp ticks (0: it read none).</summary>
    private double _windowMedian;

    /// <summary>Creates the law at <see cref="AdaptiveLimitOptions.InitialLimit"/>, in slow start.</summary>
    public AdaptiveControlLaw(AdaptiveLimitOptions options)
    {
        _options = options;
        _growBelow = 1 + ((options.Tolerance - 1) / 2);
        _noiseFloor = NoiseFloor.TotalSeconds * options.TimeProvider.TimestampFrequency;
        _remeasurement = new BaselineRemeasurement(options.MinLimit, _growBelow, _noiseFloor);
        Limit = options.InitialLimit;
        _roundLimit = options.InitialLimit;
        _cleanLimit = Math.Max(options.MinLimit, Math.Min(options.InitialLimit, AssumedUncontendedLimit));
        RecordChange(long.MinValue, Limit);
    }

    /// <summary>The limit.</summary>
    public int Limit { get; private set; }

    /// <summary>The median latency of the window the last decision read, in timestamp ticks (0: it read none, as an overload decides at once).</summary>
    public double WindowMedian => _windowMedian;

    /// <summary>Which rules decide the next window (the one owner of the law's phase).</summary>
    public LawPhase Phase { get; private set; }

    /// <summary>True until the first back-off, like TCP's slow start; again when a later window refutes a latency exit (<see cref="RefutesExit"/>).</summary>
    public bool InSlowStart => Phase is LawPhase.SlowStart or LawPhase.ConfirmingQueue;

    /// <summary>True when the last decision extends the current window instead of closing it (to <see cref="HoldUntil"/> items).</summary>
    public bool Holding { get; private set; }

    /// <summary>Items the current (extended) window runs to; 0 for an ordinary window.</summary>
    public int HoldUntil { get; private set; }

    /// <summary>Items the current window needs before a decision: one round, or the first window's seed.</summary>
    public int WindowSize(LatencyStatistics statistics)
    {
        // Seeding the baseline: the earliest completions, which queue least; at limits 1 and 2 this is two rounds, so one
        // lucky or unlucky first item does not set the baseline.
        var size = !InSlowStart ? Limit
            : statistics.PoolCount == 0 ? Math.Min(Math.Min(2 * _roundLimit, FirstWindowSamples), statistics.WindowEndItems)
            : _roundLimit;
        return Math.Min(Math.Max(size, HoldUntil), statistics.WindowCapacity);
    }

    /// <summary>Notes that a new window begins: in slow start its size is the limit now, however far answers grow it meanwhile.</summary>
    public void OnWindowReset() => _roundLimit = Limit;

    /// <summary>
    /// Slow start's growth: a successful answer adds one permit (a doubling per round trip) when more than half the limit is
    /// in use and the answer did not queue (within the growth threshold of the baseline or the uncontended upper quartile).
    /// </summary>
    public void OnAnswer(long latency, int inFlight, LatencyStatistics statistics)
    {
        if (Phase != LawPhase.SlowStart || HoldUntil != 0 || Limit >= _options.MaxLimit || (long)InFlightFactor * inFlight <= Limit
            || statistics.PoolCount == 0 || (latency > Math.Max(statistics.Baseline * _growBelow, statistics.UpperQuartile) && Significant(latency, statistics.Baseline)))
        {
            return;
        }

        Limit++;
    }

    /// <summary>Notes, during slow start, that the limit granted changed (a level when it grew by <see cref="HistoryStep"/>): the limit items start under.</summary>
    public void RecordChange(long timestamp, int granted)
    {
        if (!InSlowStart || (_historyCount > 0 && granted >= _historyLimits[_historyCount - 1] && granted < _historyLimits[_historyCount - 1] * HistoryStep))
        {
            return;
        }

        if (_historyCount == HistoryCapacity)
        {
            // Keep the newest; the oldest entry stands for everything before it.
            Array.Copy(_historyTimes, 1, _historyTimes, 0, HistoryCapacity - 1);
            Array.Copy(_historyLimits, 1, _historyLimits, 0, HistoryCapacity - 1);
            Array.Copy(_historyClean, 1, _historyClean, 0, HistoryCapacity - 1);
            _historyCount--;
        }

        _historyClean[_historyCount] = 0;
        _historyTimes[_historyCount] = timestamp;
        _historyLimits[_historyCount++] = granted;
    }

    /// <summary>A successful slow-start item that did not queue counts toward verifying the limit it started under.</summary>
    public void OnSuccess(long startTimestamp, long latency, LatencyStatistics statistics)
    {
        if (!InSlowStart || (statistics.PoolCount > 0 && latency > statistics.Baseline * _growBelow))
        {
            return;
        }

        var index = HistoryIndexAt(startTimestamp);
        if (++_historyClean[index] * 2 >= _historyLimits[index])
        {
            _verifiedLimit = Math.Max(_verifiedLimit, _historyLimits[index]);
        }
    }

    /// <summary>An overload of an item started before the last cut: no new back-off, but the downstream took no more than the bodies still running.</summary>
    public void OnStaleOverload(int inFlight)
    {
        // Each rejection of the burst also says where the downstream's level is: no higher than the calls it saw with it.
        if (_overloadCeiling > 0)
        {
            _overloadCeiling = Math.Clamp(Math.Min(_overloadCeiling, inFlight), _options.MinLimit, _options.MaxLimit);
        }
        else if (InSlowStart)
        {
            // A rejection ends slow start at once, whenever its item started: answers still coming in would grow the limit past the calls just refused.
            Rejected(Limit, Math.Clamp(inFlight, _options.MinLimit, _options.MaxLimit));
        }

        _exitLevel = 0;
        Limit = Math.Clamp(Math.Min(Limit, inFlight - 1), _options.MinLimit, _options.MaxLimit);
        AssertInvariants();
    }

    /// <summary>The next limit, at the end of a window (or at once on an overload failure: one back-off per window).</summary>
    /// <param name="statistics">The window and the baseline pool.</param>
    /// <param name="inFlight">Bodies running when the deciding item completed, itself included.</param>
    public LimitDecision Decide(LatencyStatistics statistics, int inFlight)
    {
        _windowMedian = 0;
        Holding = false;
        var before = Limit;
        var decision = DecideCore(statistics, Limit, inFlight);
        Limit = decision.Limit;

        // A decision that extends the window runs it one more limit's worth of items (the limit is unchanged then).
        HoldUntil = Holding ? statistics.WindowItems + before : 0;

        // A seed that read shared is measured below the knee at once when its latencies agree to an eighth (a steady
        // downstream's); a spread one is thin, and the thin pool's pin decides (DecideWhilePinned).
        var thin = _remeasurement.IsThin(statistics) || _coldBaseline;
        _coldBaseline = false;
        var belowKnee = _remeasurement.TakeSharedSeed(statistics, thin);
        var pinned = belowKnee ? Math.Min(Limit, Math.Max(AssumedUncontendedLimit, _options.MinLimit)) : Math.Max(FirstWindowSamples, _options.MinLimit);
        if (!InSlowStart && !_remeasurement.Spent && (belowKnee || (thin && Limit > pinned)))
        {
            // The baseline is thin (the first window's few latencies) or was measured shared: pin the limit low until it is
            // re-measured, as Envoy pins its concurrency while it measures minRTT (once per limit).
            _remeasurement.Pin(Limit);
            Phase = belowKnee ? LawPhase.RemeasuringBelowKnee : LawPhase.Remeasuring;
            Limit = pinned;
            decision = new(pinned, LimitChangeReason.Remeasure);
        }

        AssertInvariants();
        return decision;
    }

    private LimitDecision DecideCore(LatencyStatistics statistics, int limit, int inFlight)
    {
        if (statistics.WindowOverloads > 0)
        {
            // The level that rejected is the calls in flight with this one (the downstream held the others), not a limit
            // that answers had grown past them before the "no" came back.
            Rejected(limit, Math.Clamp(inFlight, _options.MinLimit, limit));

            // The multiplicative back-off, and no more than the other bodies still running: the downstream rejected this
            // one with them in flight.
            var backedOff = Math.Min((int)(limit * _options.BackoffRatio), inFlight - 1);
            return new(Math.Clamp(backedOff, _options.MinLimit, Math.Max(_options.MinLimit, limit - 1)), LimitChangeReason.Overload);
        }

        if (statistics.WindowSuccesses == 0)
        {
            return LimitDecision.Hold(limit);
        }

        var window = statistics.SortWindow();
        var latency = (double)window[window.Length / 2];
        _windowMedian = latency;
        var filled = statistics.WindowPeakInFlight >= limit;
        return InSlowStart
            ? DecideInSlowStart(statistics, limit, window, latency)
            : DecideAfterSlowStart(statistics, limit, window, latency, filled);
    }

    private LimitDecision DecideInSlowStart(LatencyStatistics statistics, int limit, ReadOnlySpan<long> window, double latency)
    {
        var firstWindow = statistics.PoolCount == 0;
        if (statistics.PoolCount >= MinPoolForQueueTest)
        {
            // A queue delays every item: most of the round above the pool's upper quartile (a rank test, whatever the spread),
            // and the median past the growth threshold by two standard errors (drift is not a queue).
            var above = window.Length - LatencyStatistics.UpperBound(window, statistics.UpperQuartile);
            var needed = (2 * window.Length / 3) + 1;
            var ratio = Significant(latency, statistics.Baseline) ? latency / statistics.Baseline : 1;
            var standardError = MedianStandardErrorFactor * statistics.Spread * Math.Sqrt((1.0 / window.Length) + (1.0 / statistics.PoolCount));
            if (window.Length >= 2 && above >= needed && ratio > _growBelow * Math.Exp(QueueTestStandardErrors * standardError))
            {
                if (Phase != LawPhase.ConfirmingQueue && ratio > OneRoundQueueBound * (window.Length >= HoldSamples ? 1 : Math.Exp(QueueTestStandardErrors * standardError)))
                {
                    // More than a queue could add in one round (Little's law: at most twice the last round's reading): a stall reads
                    // like this once, a queue persists. Confirm with one more round at the level this one ran at.
                    Phase = LawPhase.ConfirmingQueue;
                    return new(Math.Clamp(Math.Min(limit, _roundLimit), _options.MinLimit, _options.MaxLimit), LimitChangeReason.QueueSuspected);
                }

                // Gradient: cut the round's level (not the limit answers grew since) so, by Little's law, the queue drains to the growth threshold.
                ExitSlowStart(limit);
                var level = Math.Min(limit, _roundLimit);
                _exitLevel = level;
                _remeasurement.NoteExitRound(_roundLimit, statistics, latency);
                return new(Math.Clamp(Math.Max((int)(level * _growBelow / ratio), level / MaxSlowStartExitCut), _options.MinLimit, Math.Max(_options.MinLimit, limit - 1)), LimitChangeReason.QueueSeen);
            }

            if (ratio > _growBelow && window.Length < Math.Max(2 * limit, HoldSamples) && statistics.WindowItems + limit <= statistics.WindowCapacity)
            {
                // Suspicious but not conclusive: hold the limit and extend the round, so the test above sees more samples.
                Holding = true;
                return LimitDecision.Hold(limit);
            }

            if (ratio > _growBelow && _remeasurement.IsThin(statistics))
            {
                // Extended and still inconclusive against a thin baseline: end slow start here; the pin re-measures the baseline (Decide).
                ExitSlowStart(limit);
                _remeasurement.NoteExitRound(_roundLimit, statistics, latency);
                return LimitDecision.Hold(limit);
            }
        }

        // A suspect round not confirmed: a stall, not a queue. Growth resumes.
        Phase = LawPhase.SlowStart;

        // The first window seeds the baseline; after it, only rounds that read as uncontended feed it, read as a censored
        // sample when the round's answers are the fastest of more items (LatencyStatistics.CloseRound).
        if (firstWindow)
        {
            _remeasurement.NoteFirstWindow(statistics.WindowPeakInFlight, latency);
        }

        // The round's own median (its cohort's when known; else one sample's worth) must be faster than the baseline by
        // ColdBaselineRatio and by two standard errors of the two medians: small samples of a heavy tail differ 4x by chance.
        var roundSamples = Math.Max(1, statistics.RoundRanks);
        var roundLatency = statistics.RoundRanks > 0 ? statistics.RoundSample[statistics.RoundRanks / 2] : latency;
        var coldRatio = ColdBaselineRatio * Math.Exp(QueueTestStandardErrors * MedianStandardError(statistics, roundSamples));
        if (!firstWindow && Significant(statistics.Baseline, roundLatency * coldRatio))
        {
            // The first window was cold (code compiled, connections opened), not the downstream's pace, and growth was judged
            // against it: slow start ends at the round's level, the baseline starts again from this round, and the pin
            // re-measures it below the level answers reached (Decide), as Envoy pins while it measures minRTT.
            statistics.ClearPool();
            statistics.AddToPool(statistics.RoundRanks > 0 ? statistics.RoundSample : window, SlowStartRoundShare);
            ExitSlowStart(limit);
            _remeasurement.NoteExitRound(_roundLimit, statistics, latency);
            _coldBaseline = true;
            return new(Math.Clamp(Math.Min(limit, _roundLimit), _options.MinLimit, _options.MaxLimit), LimitChangeReason.Remeasure);
        }

        if (statistics.PoolCount == 0 || latency <= statistics.Baseline * _growBelow)
        {
            statistics.AddToPool(!firstWindow && statistics.RoundRanks > 0 ? statistics.RoundSample : window, SlowStartRoundShare);
        }

        if (!firstWindow)
        {
            // The round passed: the limit its window started at (its lowest: answers have raised it since) is clean.
            _cleanLimit = Math.Max(_cleanLimit, LimitAt(statistics.WindowStart));
        }

        // The round passed. Growth is per answer (OnAnswer), not per round.
        return LimitDecision.Hold(limit);
    }

    private LimitDecision DecideAfterSlowStart(LatencyStatistics statistics, int limit, ReadOnlySpan<long> window, double latency, bool filled)
    {
        if (Phase is LawPhase.Remeasuring or LawPhase.RemeasuringBelowKnee)
        {
            return DecideWhilePinned(statistics, limit, window);
        }

        if (filled && RefutesExit(statistics, limit, window.Length, latency))
        {
            // A window at the level whose queue ended slow start reads no queue: that reading was a stall. Resume slow start, as TCP does.
            ReenterSlowStart();
            return LimitDecision.Hold(limit);
        }

        // Growth must buy throughput only where no "no" bounds it: below a level the downstream rejected at, its rejections
        // say where it stands, and judging each step on a full window held a client cut low to a step per 32 answers.
        var kneeTests = _options.GrowthMustBuyThroughput && !RejectedAbove;
        if (window.Length < _options.MinWindowSamples && statistics.WindowItems + limit <= statistics.WindowCapacity
            && ((kneeTests && (_steppedFrom > 0 || (_ceilingAtKnee && limit + 1 >= _overloadCeiling)))
                || !(filled && (latency < statistics.Baseline * ClearlyUncontended || ClearlyBelowGrowthThreshold(statistics, window.Length, latency)))))
        {
            // A short window may grow when it clearly reads no queue; holds, back-offs and knee tests need MinWindowSamples: extend it.
            Holding = true;
            return LimitDecision.Hold(limit);
        }

        var steppedFrom = _steppedFrom;
        _steppedFrom = 0;
        var knee = 0;
        if (steppedFrom > limit && limit == _steppedTo)
        {
            // A step down taken because growth must buy throughput (below): the same test, read the other way.
            if (GrowthBoughtNoThroughput(statistics, limit, latency, window.Length, steppedFrom, _latencyBeforeStep, _samplesBeforeStep, standardErrors: 1))
            {
                // Latency fell in proportion: the step cost no throughput, the level it left was above the knee. Stay, with
                // that level as the ceiling the spaced probes approach.
                NoteCeiling(steppedFrom, atKnee: true);
                knee = limit;
            }
            else
            {
                // Latency did not fall in proportion: the step cost throughput, the level it left is the knee (or below it,
                // when the test could not tell). Go back to it, and hold there.
                _kneeFloor = steppedFrom;
                _windowsAtFloor = 0;
                knee = steppedFrom;
            }
        }

        var grownFrom = steppedFrom;
        if (grownFrom > 0 && grownFrom < limit && GrowthBoughtNoThroughput(statistics, grownFrom, _latencyBeforeStep, _samplesBeforeStep, limit, latency, window.Length, QueueTestStandardErrors))
        {
            // Latency rose with the level (Little's law: the added calls only queued): the level grown from was above the knee;
            // re-measure the baseline only below half of it from now on.
            _cleanLimit = Math.Min(_cleanLimit, grownFrom);
            if (_options.GrowthMustBuyThroughput)
            {
                // Growth must buy throughput: take the step back and try it again later as a spaced probe.
                NoteCeiling(limit, atKnee: true);
                _exitLevel = 0;
                knee = grownFrom;
            }
        }

        if (limit * 2 <= _cleanLimit || statistics.PoolCount == 0 || (limit <= FirstWindowSamples && _remeasurement.IsThin(statistics)))
        {
            // Half of a level slow start found uncontended: this window measured the baseline again, which keeps a baseline
            // that came out too low (or a downstream that got slower) from pushing the limit to its minimum.
            statistics.AddToPool(window, LatencyStatistics.PoolCapacity);
        }

        var ratio = Significant(latency, statistics.Baseline) ? latency / statistics.Baseline : Math.Min(1, latency / statistics.Baseline);
        var previousRatio = _previousRatio;
        _previousRatio = ratio;
        if (ratio > OneRoundQueueBound && previousRatio <= _options.Tolerance)
        {
            // More than a queue could add in one window after one within the band (Little's law: at most in proportion to
            // a quarter's growth): a stall of the downstream reads like this once, a queue persists. The next window, of
            // items started from now on, confirms it.
            return new(limit, LimitChangeReason.QueueSuspected);
        }

        if (ratio > _options.Tolerance)
        {
            // Gradient: shrink so that, by Little's law, the queue the ratio reveals drains to the growth threshold.
            var target = (int)(limit * _growBelow / ratio);
            _kneeFloor = 0;
            return new(Math.Clamp(Math.Max(target, limit / MaxBackoffCut), _options.MinLimit, Math.Max(_options.MinLimit, limit - 1)), LimitChangeReason.QueueSeen);
        }

        if (knee > 0)
        {
            return new(knee, LimitChangeReason.KneeFound);
        }

        if (ratio < _growBelow && filled)
        {
            // Grow toward where latency would reach the growth threshold; once the downstream has said no, by one per window
            // (AIMD: clients sharing a downstream converge to equal shares only when each adds the same), onto that level a spaced probe.
            var step = Math.Max(1, (int)(limit * Math.Min(MaxGrowthFraction, (_growBelow / ratio) - 1)));
            var probe = _overloadCeiling > 0 && (!_ceilingAtKnee || limit + step >= _overloadCeiling);
            if (probe)
            {
                step = ProbeStep(limit);
                probe = limit + step >= _overloadCeiling;
            }

            var grown = (int)Math.Min((long)limit + step, _options.MaxLimit);
            if (grown > limit)
            {
                // A window that grew the limit read low, some by luck: the latency expected without a queue is the baseline
                // at least, so a lucky window's successor does not read as a rise.
                NoteStep(limit, grown, Math.Max(latency, statistics.Baseline), window.Length);
                return new(grown, probe ? LimitChangeReason.Probe : LimitChangeReason.Growth);
            }
        }

        if (kneeTests && filled && window.Length >= _options.MinWindowSamples && limit > _options.MinLimit
            && (limit > _kneeFloor || ++_windowsAtFloor >= MaxProbeSpacing))
        {
            // Growth must buy throughput: a filled window that does not grow steps down one; the next window tells whether that cost throughput.
            _kneeFloor = _windowsAtFloor = 0;
            NoteStep(limit, limit - 1, latency, window.Length);
            return new(limit - 1, LimitChangeReason.KneeTest);
        }

        return LimitDecision.Hold(limit);
    }

    /// <summary>Notes a step from <paramref name="from"/> to <paramref name="to"/>, decided by a window of <paramref name="samples"/> at <paramref name="latency"/>, for the next window's test.</summary>
    private void NoteStep(int from, int to, double latency, int samples)
    {
        _steppedFrom = from;
        _steppedTo = to;
        _latencyBeforeStep = latency;
        _samplesBeforeStep = samples;
    }

    /// <summary>
    /// Growth at the level the last overload was seen at: one step per window below it; onto it a probe every
    /// <see cref="_probeSpacing"/> windows (doubling per rejected probe); once a probe passes, steps double (the downstream got bigger).
    /// </summary>
    private int ProbeStep(int limit)
    {
        if (limit + 1 < _overloadCeiling)
        {
            return 1;
        }

        if (++_windowsAtCeiling < _probeSpacing)
        {
            return 0;
        }

        _windowsAtCeiling = 0;
        if (limit >= _overloadCeiling)
        {
            // The last probe passed: the old level no longer holds the downstream back.
            _probeStep = Math.Min(2 * _probeStep, Math.Max(1, (int)(limit * MaxGrowthFraction)));
            _probeSpacing = MinProbeSpacing;
            _overloadCeiling = limit + _probeStep;
        }

        return _probeStep;
    }

    /// <summary>True when a filled window at or above the level whose round ended slow start reads clearly below the growth threshold: that round was a stall.</summary>
    private bool RefutesExit(LatencyStatistics statistics, int limit, int samples, double latency) =>
        _exitLevel > 0 && limit >= _exitLevel && ClearlyBelowGrowthThreshold(statistics, samples, latency);

    /// <summary>True when a window's median is below the growth threshold by two standard errors (a rise within the noise floor reads as none).</summary>
    private bool ClearlyBelowGrowthThreshold(LatencyStatistics statistics, int samples, double latency)
    {
        var ratio = Significant(latency, statistics.Baseline) ? latency / statistics.Baseline : 1;
        return statistics.PoolCount >= MinPoolForQueueTest && ratio * Math.Exp(QueueTestStandardErrors * MedianStandardError(statistics, samples)) < _growBelow;
    }

    /// <summary>The standard error of the log of a window's median against the pool's: both are samples of the pool's spread.</summary>
    private static double MedianStandardError(LatencyStatistics statistics, int samples) =>
        MedianStandardErrorFactor * statistics.Spread * Math.Sqrt((1.0 / samples) + (1.0 / statistics.PoolCount));

    /// <summary>
    /// failsafe-go's throughput signal (Little's law): true when latency rose from the window at <paramref name="low"/> to the one at
    /// <paramref name="high"/> by more than half the ratio of the levels in logs, by <paramref name="standardErrors"/> standard errors
    /// of the two medians, and by more than the noise floor: the calls above <paramref name="low"/> only queued.
    /// </summary>
    private bool GrowthBoughtNoThroughput(LatencyStatistics statistics, int low, double lowLatency, int lowSamples, int high, double highLatency, int highSamples, double standardErrors)
    {
        if (!Significant(highLatency, lowLatency))
        {
            return false;
        }

        var standardError = MedianStandardErrorFactor * statistics.Spread * Math.Sqrt((1.0 / lowSamples) + (1.0 / highSamples));
        return Math.Log(highLatency / lowLatency) > (Math.Log((double)high / low) / 2) + (standardErrors * standardError);
    }

    /// <summary>A window while the limit is pinned to re-measure the baseline: hold until measured, then back toward the limit before the pin.</summary>
    private LimitDecision DecideWhilePinned(LatencyStatistics statistics, int limit, ReadOnlySpan<long> window)
    {
        if (Phase == LawPhase.RemeasuringBelowKnee)
        {
            return MeasureBelowKnee(statistics, limit, window);
        }

        // Re-measuring a thin pool at the first window's size: every window feeds it, until it holds ThinPool latencies.
        if (!_remeasurement.RefillThinPool(statistics, limit, window))
        {
            return LimitDecision.Hold(limit);
        }

        var pinned = Math.Max(AssumedUncontendedLimit, _options.MinLimit);
        if (limit > pinned && _remeasurement.MeasuredAboveKnee(limit))
        {
            // Latency rose between this level and the exit round more like the level than flat: this level is past the knee too; measure below it.
            _remeasurement.Pin(Math.Max(limit, _remeasurement.PinnedFrom));
            Phase = LawPhase.RemeasuringBelowKnee;
            return new(pinned, LimitChangeReason.Remeasure);
        }

        // The pool holds enough latencies again: back to the limit before the pin (the band judges it from the next window).
        Phase = LawPhase.Steady;
        return new(Math.Max(limit, _remeasurement.End()), LimitChangeReason.RemeasureDone);
    }

    /// <summary>A window of the pin below the knee: if the seed's level read shared, the limit goes to the growth threshold's level of the knee measured.</summary>
    private LimitDecision MeasureBelowKnee(LatencyStatistics statistics, int limit, ReadOnlySpan<long> window)
    {
        var before = _remeasurement.PinnedFrom;
        if (!_remeasurement.MeasureBelowKnee(statistics, limit, window, out var knee))
        {
            return LimitDecision.Hold(limit);
        }

        Phase = LawPhase.Steady;
        if (knee is not { } level)
        {
            return new(Math.Max(limit, before), LimitChangeReason.RemeasureDone);
        }

        _cleanLimit = Math.Min(_cleanLimit, limit);
        return new(Math.Clamp((int)(level * _growBelow), limit, Math.Max(limit, before)), LimitChangeReason.RemeasureDone);
    }

    /// <summary>Slow start again after an exit a later window refuted; its history starts over at the limit now.</summary>
    private void ReenterSlowStart()
    {
        Phase = LawPhase.SlowStart;
        _exitLevel = 0;
        _historyCount = 0;
        RecordChange(long.MinValue, Limit); // every item running now started under this level or a lower one
    }

    /// <summary>True when the ceiling growth approaches is a level the downstream rejected at, not one growth bought no
    /// throughput at (a step that buys none makes it that, and the knee tests resume).</summary>
    private bool RejectedAbove => _overloadCeiling > 0 && !_ceilingAtKnee;

    /// <summary>The most latency ratio a queue can add in one round or window (Little's law: the level before passed at no less than half this one): more reads as a stall until the next confirms it.</summary>
    private double OneRoundQueueBound => InFlightFactor * _growBelow;

    /// <summary>True when <paramref name="latency"/> is above <paramref name="baseline"/> by more than the <see cref="NoiseFloor"/>.</summary>
    private bool Significant(double latency, double baseline) => latency - baseline > _noiseFloor;

    /// <summary>The limit slow start had at <paramref name="timestamp"/>.</summary>
    private int LimitAt(long timestamp) => _historyLimits[HistoryIndexAt(timestamp)];

    private int HistoryIndexAt(long timestamp)
    {
        var index = _historyCount - 1;
        while (index > 0 && _historyTimes[index] > timestamp)
        {
            index--;
        }

        return index;
    }

    /// <summary>The downstream said no at <paramref name="rejectedAt"/> calls in flight: slow start is over, and that level is the ceiling probes approach.</summary>
    private void Rejected(int limit, int rejectedAt)
    {
        _kneeFloor = 0;
        ExitSlowStart(limit);
        _exitLevel = 0;
        _remeasurement.Abandon();
        Phase = LawPhase.Steady;
        NoteCeiling(rejectedAt, atKnee: false);
    }

    /// <summary>A level the downstream does not take (it rejected there, or growth to it bought no throughput): growth approaches it by spaced probes.</summary>
    private void NoteCeiling(int level, bool atKnee)
    {
        _ceilingAtKnee = atKnee;
        if (_overloadCeiling > 0 && level >= _overloadCeiling)
        {
            // A probe of the last ceiling failed again: wait longer before the next one.
            _probeSpacing = Math.Min(2 * _probeSpacing, MaxProbeSpacing);
        }

        _overloadCeiling = level;
        _windowsAtCeiling = 0;
        _probeStep = 1;
    }

    private void ExitSlowStart(int limit)
    {
        if (InSlowStart)
        {
            Phase = LawPhase.Steady;

            // Re-measure the baseline at half of the highest level known clean: a round that passed, or a level whose items
            // came back without queueing (rounds that answers outgrew rarely pass whole).
            _cleanLimit = Math.Max(_options.MinLimit, Math.Min(Math.Max(_cleanLimit, _verifiedLimit), limit / 2));
        }
    }

    [Conditional("DEBUG")]
    private void AssertInvariants()
    {
        Debug.Assert(Limit >= _options.MinLimit && Limit <= _options.MaxLimit);
        Debug.Assert(_remeasurement.Pinned == Phase is LawPhase.Remeasuring or LawPhase.RemeasuringBelowKnee);
        Debug.Assert(HoldUntil == 0 || Holding);
        _remeasurement.AssertInvariants();
    }
}
