using System.Diagnostics;

namespace FanOut.Limits.Adaptive;

/// <summary>
/// The re-measurement of the baseline after slow start (a "pin"), which <see cref="AdaptiveControlLaw"/> asks: when the
/// baseline pool is thin (<see cref="IsThin"/>: the first window's few latencies, spread) or the round that ended slow start
/// read the first window's latencies as shared by processor sharing (<see cref="TakeSharedSeed"/>), the law pins the limit
/// low; this gathers the latencies measured there, then adds them to the pool or, when they read faster than the level the
/// baseline was measured at, replaces it. It owns what it measured (the level and latency the baseline was measured at, the
/// round that ended slow start, the pin's latencies); the law decides when to pin and what limit to return. Once per limit.
/// Reads no clock and allocates only its pin's latencies, once; the owning limit calls the law under its lock.
/// </summary>
internal sealed class BaselineRemeasurement
{
    /// <summary>
    /// A pool of fewer latencies than this is thin unless its latencies agree (its middle half within an eighth of the
    /// baseline or the noise floor: a steady downstream's four are as good as more): a lognormal median needs about this many
    /// to be within ~13%. A thin pool is re-measured at the first window's size.
    /// </summary>
    internal const int ThinPool = 32;

    /// <summary>A pool whose middle half spans less than the baseline over this (or the noise floor) reads steady, not thin.</summary>
    private const int ThinPoolSteadyDivisor = 8;

    /// <summary><see cref="AdaptiveLimitOptions.MinLimit"/>.</summary>
    private readonly int _minLimit;

    /// <summary>The law's growth threshold: below this latency ratio the limit grows.</summary>
    private readonly double _growBelow;

    /// <summary><see cref="AdaptiveControlLaw.NoiseFloor"/> in timestamp ticks.</summary>
    private readonly double _noiseFloor;

    /// <summary>The limit before a re-measurement (of a thin pool, or below the knee) pinned it (0: not pinned).</summary>
    private int _pinnedFrom;

    /// <summary>
    /// True once a pin has begun (a thin pool's re-measurement, or a shared seed's), or an overload has ended or ruled one out:
    /// it happens once per limit.
    /// </summary>
    private bool _pinnedOnce;

    /// <summary>The latencies of the pin's windows that ran at the pin (allocated by the first pin), in timestamp ticks.</summary>
    private long[]? _pinSamples;

    private int _pinSampleCount;

    /// <summary>True when the round that ended slow start read the first window's latencies as shared (<see cref="ExitRoundReadsSharedSeed"/>).</summary>
    private bool _seedShared;

    /// <summary>
    /// The level the baseline was measured at: the most bodies running while the first window's items completed, then the
    /// level of a thin pool's pin once it has measured.
    /// </summary>
    private int _measuredLevel;

    /// <summary>The median latency measured at <see cref="_measuredLevel"/>, in timestamp ticks.</summary>
    private double _measuredLatency;

    /// <summary>The limit the round that ended slow start by reading a queue began at.</summary>
    private int _exitRoundStart;

    /// <summary>The most bodies running during that round (answers grew the limit while it ran).</summary>
    private int _exitRoundPeak;

    /// <summary>That round's median latency, in timestamp ticks.</summary>
    private double _exitRoundLatency;

    /// <summary>Creates the re-measurement, not pinned, for a law of <paramref name="minLimit"/>, growth threshold <paramref name="growBelow"/> and noise floor <paramref name="noiseFloor"/> (in timestamp ticks).</summary>
    public BaselineRemeasurement(int minLimit, double growBelow, double noiseFloor)
    {
        _minLimit = minLimit;
        _growBelow = growBelow;
        _noiseFloor = noiseFloor;
    }

    /// <summary>True while the limit is pinned for a re-measurement (<see cref="PinnedFrom"/> is the limit before the pin).</summary>
    public bool Pinned => _pinnedFrom > 0;

    /// <summary>The limit before the pin (0: not pinned).</summary>
    public int PinnedFrom => _pinnedFrom;

    /// <summary>True once a pin has begun (or an overload has ruled one out): it happens once per limit.</summary>
    public bool Spent => _pinnedOnce;

    /// <summary>
    /// True when the baseline is the median of fewer than <see cref="ThinPool"/> latencies that spread (a pool of fewer than
    /// eight reads steady only within the noise floor: four lognormal latencies can agree by chance): typically the first
    /// window's four, when no round after it read uncontended.
    /// </summary>
    public bool IsThin(LatencyStatistics statistics) =>
        statistics.PoolCount is > 0 and < ThinPool
        && statistics.UpperQuartile - statistics.LowerQuartile > (statistics.PoolCount < 2 * AdaptiveControlLaw.FirstWindowSamples ? _noiseFloor : Math.Max(_noiseFloor, statistics.Baseline / ThinPoolSteadyDivisor));

    /// <summary>Notes the first window's measurement: the most bodies running while its items completed, and their median latency.</summary>
    /// <param name="level">The window's peak in flight.</param>
    /// <param name="latency">Its median latency, in timestamp ticks.</param>
    public void NoteFirstWindow(int level, double latency)
    {
        _measuredLevel = level;
        _measuredLatency = latency;
    }

    /// <summary>
    /// Notes the round that ended slow start by reading a queue: the level it ran at (between the limit it began at,
    /// <paramref name="roundStart"/>, and the most bodies running during it: answers grew the limit while it ran) and its
    /// median latency (its censored sample's when it has one: a round's answers are the fastest of the items started in it,
    /// so the window's median reads low); and whether it reads the first window's latencies as shared
    /// (<see cref="ExitRoundReadsSharedSeed"/>).
    /// </summary>
    public void NoteExitRound(int roundStart, LatencyStatistics statistics, double windowMedian)
    {
        _exitRoundStart = roundStart;
        _exitRoundPeak = statistics.WindowPeakInFlight;
        _exitRoundLatency = statistics.RoundRanks > 0 ? statistics.RoundSample[statistics.RoundRanks / 2] : windowMedian;
        _seedShared = ExitRoundReadsSharedSeed(windowMedian);
    }

    /// <summary>
    /// True when the round that ended slow start read the first window's latencies as shared (<see cref="NoteExitRound"/>)
    /// and they agree to an eighth (a steady downstream's), so they are to be measured below the knee at once; a spread seed
    /// is thin (<paramref name="thin"/>), and the thin pool's pin decides. The reading is cleared: the law takes it at every
    /// decision, so at the one whose round ended slow start.
    /// </summary>
    public bool TakeSharedSeed(LatencyStatistics statistics, bool thin)
    {
        var shared = _seedShared && !thin && statistics.UpperQuartile - statistics.LowerQuartile <= statistics.Baseline / ThinPoolSteadyDivisor;
        _seedShared = false;
        return shared;
    }

    /// <summary>
    /// Pins: <paramref name="from"/> is the limit to go back to. The law's phase says what the pin measures: below the knee
    /// (<see cref="MeasureBelowKnee"/>), or a thin pool refilled (<see cref="RefillThinPool"/>). The pin's latencies start over
    /// (their array is allocated by the first pin).
    /// </summary>
    public void Pin(int from)
    {
        _pinnedOnce = true;
        _pinnedFrom = from;
        _pinSampleCount = 0;
        _pinSamples ??= new long[ThinPool];
    }

    /// <summary>
    /// A window of the pin that re-measures a thin pool: every window feeds the pool, until it holds <see cref="ThinPool"/>
    /// latencies; those of windows that ran at the pin (<paramref name="limit"/>) are kept as the pin's as well.
    /// </summary>
    /// <returns>True when the pool is no longer thin.</returns>
    public bool RefillThinPool(LatencyStatistics statistics, int limit, ReadOnlySpan<long> window)
    {
        statistics.AddToPool(window, LatencyStatistics.PoolCapacity);
        if (statistics.WindowPeakInFlight <= limit)
        {
            GatherPinSamples(window);
        }

        return !IsThin(statistics);
    }

    /// <summary>
    /// Once the thin pool's pin has kept at least the first window's size of latencies that ran at it: notes its level,
    /// <paramref name="limit"/>, and their median as the level and latency the baseline was measured at, and returns true when
    /// the round that ended slow start reads that level as at or above the knee as well (<see cref="PinWasAboveKnee"/>).
    /// </summary>
    public bool MeasuredAboveKnee(int limit)
    {
        if (_pinSampleCount < AdaptiveControlLaw.FirstWindowSamples)
        {
            return false;
        }

        var measured = _pinSamples.AsSpan(0, _pinSampleCount);
        measured.Sort();
        _measuredLevel = limit;
        _measuredLatency = measured[measured.Length / 2];
        return PinWasAboveKnee();
    }

    /// <summary>Ends the pin.</summary>
    /// <returns>The limit before the pin.</returns>
    public int End()
    {
        var before = _pinnedFrom;
        _pinnedFrom = 0;
        return before;
    }

    /// <summary>
    /// A window of the pin that measures below the knee: only windows that ran at the pin (<paramref name="limit"/>) count (the
    /// first ones run beside the items started before it, which share the downstream with them). Once it has measured at
    /// least the first window's size of latencies that agree (or <see cref="ThinPool"/> that spread), it ends. If they read
    /// faster than the latency measured at <see cref="_measuredLevel"/> by more than the growth threshold (and the noise
    /// floor), that level was shared: they replace the pool, and <paramref name="knee"/> is the level of the knee by Little's
    /// law (the throughput measured there, its level over its latency, times the latency measured here). If not, the baseline
    /// stands: they join the pool (measurements at a level with no queue), and <paramref name="knee"/> is null.
    /// </summary>
    /// <returns>True when the measurement is done and the pin has ended.</returns>
    public bool MeasureBelowKnee(LatencyStatistics statistics, int limit, ReadOnlySpan<long> window, out double? knee)
    {
        knee = null;
        if (statistics.WindowPeakInFlight > limit)
        {
            return false;
        }

        GatherPinSamples(window);
        var measured = _pinSamples.AsSpan(0, _pinSampleCount);
        measured.Sort();
        var median = (double)measured[measured.Length / 2];
        var middleHalf = measured[3 * measured.Length / 4] - measured[measured.Length / 4];
        if (measured.Length < AdaptiveControlLaw.FirstWindowSamples
            || (measured.Length < ThinPool && middleHalf > (measured.Length < 2 * AdaptiveControlLaw.FirstWindowSamples ? _noiseFloor : Math.Max(_noiseFloor, median / ThinPoolSteadyDivisor))))
        {
            return false;
        }

        End();
        if (median * _growBelow >= _measuredLatency || !Significant(_measuredLatency, median))
        {
            statistics.AddToPool(measured, LatencyStatistics.PoolCapacity);
            return true;
        }

        statistics.ClearPool();
        statistics.AddToPool(measured, LatencyStatistics.PoolCapacity);
        knee = _measuredLevel * median / _measuredLatency;
        return true;
    }

    /// <summary>An overload failure: the pin ends where it is (the back-off decides the limit), and none follows.</summary>
    public void Abandon()
    {
        _pinnedFrom = 0;
        _pinnedOnce = true;
    }

    /// <summary>Checks, in Debug builds, what a pin's state must satisfy whatever the law decided.</summary>
    [Conditional("DEBUG")]
    public void AssertInvariants()
    {
        Debug.Assert(_pinSampleCount >= 0 && _pinSampleCount <= ThinPool);
        Debug.Assert(_pinnedFrom == 0 || (_pinnedOnce && _pinSamples != null));
    }

    /// <summary>
    /// True when the round that ended slow start read a median (<paramref name="windowMedian"/>: its answers', which run at
    /// its peak level when a steady downstream's round ends together) risen from the first window's in proportion to the
    /// most bodies running (within the growth threshold either way) since the first window's: by Little's law (throughput is in
    /// flight over latency) the throughput was the same at both levels, so the first window already ran at or above the knee
    /// and its latencies may be shared (a processor-shared downstream slows every call by the calls in flight over its cores,
    /// the first window's included). A queue served in order leaves the first items started unqueued, so its round reads a
    /// rise above the level's; a downstream with room at the first window's level reads less (throughput grew with the level).
    /// </summary>
    private bool ExitRoundReadsSharedSeed(double windowMedian)
    {
        if (_measuredLevel <= Math.Max(AdaptiveControlLaw.AssumedUncontendedLimit, _minLimit) || _measuredLatency <= 0)
        {
            return false;
        }

        var levelRatio = (double)_exitRoundPeak / _measuredLevel;
        var latencyRatio = windowMedian / _measuredLatency;
        return levelRatio > _growBelow && latencyRatio * _growBelow >= levelRatio && latencyRatio <= levelRatio * _growBelow;
    }

    /// <summary>
    /// True when the round that ended slow start read a latency risen from the one a thin pool's pin measured by more than
    /// half the rise of the level, in logs (the midpoint between a flat latency, below the knee, and one in proportion, above
    /// it, as the law reads a growth step), that round's level taken halfway between the limit it began at and its peak: the
    /// pin's level was at or above the knee too. Its pinned latencies are many (a thin pool's pin measures until the pool
    /// holds <see cref="ThinPool"/>), unlike the first window's four, so the midpoint is not lost in their spread; a queue
    /// served in order whose capacity is at least twice the pin reads below it.
    /// </summary>
    private bool PinWasAboveKnee()
    {
        var levelRatio = (_exitRoundStart + _exitRoundPeak) / 2.0 / _measuredLevel;
        return levelRatio > 1 && _exitRoundLatency > _measuredLatency * Math.Sqrt(levelRatio);
    }

    /// <summary>Keeps a pinned window's latencies, up to <see cref="ThinPool"/> of them.</summary>
    private void GatherPinSamples(ReadOnlySpan<long> window)
    {
        foreach (var latency in window)
        {
            if (_pinSampleCount < ThinPool)
            {
                _pinSamples![_pinSampleCount++] = latency;
            }
        }
    }

    /// <summary>True when <paramref name="latency"/> is above <paramref name="baseline"/> by more than the noise floor (as the law's test).</summary>
    private bool Significant(double latency, double baseline) => latency - baseline > _noiseFloor;
}
