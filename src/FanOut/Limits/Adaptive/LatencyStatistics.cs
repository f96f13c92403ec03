using System.Diagnostics;

namespace FanOut.Limits.Adaptive;

/// <summary>
/// What the adaptive limit knows about latency: the baseline pool (latencies measured without queueing, whose median is
/// the baseline) and the current window (the items completed since the last decision). No decisions are made here; see
/// <see cref="AdaptiveControlLaw"/>. Not thread-safe: the owning limit calls it under its lock.
/// </summary>
internal sealed class LatencyStatistics
{
    /// <summary>Latencies the baseline is the median of (a ring: the newest uncontended samples win).</summary>
    internal const int PoolCapacity = 128;

    /// <summary>The most latencies a window keeps; beyond it a window closes early (only limits above this are affected).</summary>
    internal const int MaxWindowCapacity = 4096;

    /// <summary>A normal distribution's interquartile range, in standard deviations.</summary>
    private const double NormalInterquartileRangeInSigmas = 1.349;

    /// <summary>Uncontended latencies, in timestamp ticks.</summary>
    private readonly long[] _pool = new long[PoolCapacity];

    /// <summary>Sorting space for the pool's quantiles, so a decision never allocates.</summary>
    private readonly long[] _scratch = new long[PoolCapacity];

    /// <summary>Latencies of the window's successful items; sorted by <see cref="SortWindow"/> when the window closes.</summary>
    private readonly long[] _windowLatencies;

    /// <summary>Start timestamps of the window's successful items, in the order of <see cref="_windowLatencies"/> until sorted.</summary>
    private readonly long[] _windowStarts;

    /// <summary>When items of the window were counted (at completions), oldest first (with <see cref="_countedStarts"/>).</summary>
    private readonly long[] _countTimes;

    /// <summary>Items that had started within the window before the matching <see cref="_countTimes"/> entry.</summary>
    private readonly int[] _countedStarts;

    /// <summary>The censored sample of the last round <see cref="CloseRound"/> read: its answers, sorted.</summary>
    private readonly long[] _round;

    private int _counts;

    private int _roundAnswers;

    private int _poolNext;

    /// <summary>Creates the statistics for a limit that never exceeds <paramref name="maxLimit"/>.</summary>
    public LatencyStatistics(int maxLimit, int minWindowSamples)
    {
        _windowLatencies = new long[Math.Min(Math.Max(maxLimit, minWindowSamples), MaxWindowCapacity)];
        _windowStarts = new long[_windowLatencies.Length];
        _countTimes = new long[2 * _windowLatencies.Length];
        _round = new long[_countTimes.Length];
        _countedStarts = new int[_countTimes.Length];
        WindowStart = long.MinValue;
    }

    /// <summary>Latencies in the pool.</summary>
    public int PoolCount { get; private set; }

    /// <summary>Median latency of the pool, in timestamp ticks: the latency without queueing. 0 until measured.</summary>
    public double Baseline { get; private set; }

    /// <summary>The pool's 75th percentile, in timestamp ticks: the slow-start round test counts the items above it.</summary>
    public long UpperQuartile { get; private set; }

    /// <summary>The pool's 25th percentile, in timestamp ticks.</summary>
    public long LowerQuartile { get; private set; }

    /// <summary>The pool's spread: the standard deviation of log latency, estimated from its interquartile range.</summary>
    public double Spread { get; private set; }

    /// <summary>Items that started before this timestamp ran under an older limit and are left out of the window.</summary>
    public long WindowStart { get; private set; }

    /// <summary>
    /// Items that started at or after this timestamp are left out of the window: set while the first window is open, once
    /// its items have started, so that the baseline is seeded by the first items started (all of them, however long they
    /// take), not by the earliest completions of the items started after them (their luckiest ones).
    /// </summary>
    public long WindowEnd { get; private set; } = long.MaxValue;

    /// <summary>Items that started before <see cref="WindowEnd"/>: the most the window can count.</summary>
    public int WindowEndItems { get; private set; } = int.MaxValue;

    /// <summary>Items the window counted (successes, overloads and other failures).</summary>
    public int WindowItems { get; private set; }

    /// <summary>Successful items in the window (the latencies it holds).</summary>
    public int WindowSuccesses { get; private set; }

    /// <summary>Items in the window that failed with an overload signal.</summary>
    public int WindowOverloads { get; private set; }

    /// <summary>The most bodies seen running at once during the window (sampled at each completion).</summary>
    public int WindowPeakInFlight { get; private set; }

    /// <summary>
    /// The items the last slow-start round stands for (see <see cref="CloseRound"/>): its answers in <see cref="RoundSample"/>
    /// and, above them, the ones not back yet.
    /// </summary>
    public int RoundRanks { get; private set; }

    /// <summary>The answers of the last round's censored sample (<see cref="CloseRound"/>), sorted; empty when it had none.</summary>
    public ReadOnlySpan<long> RoundSample => _round.AsSpan(0, _roundAnswers);

    /// <summary>How many latencies a window can hold.</summary>
    public int WindowCapacity => _windowLatencies.Length;

    /// <summary>Counts one completed item in the window.</summary>
    /// <param name="start">Its start timestamp.</param>
    /// <param name="latency">Its latency in timestamp ticks (successes only).</param>
    /// <param name="succeeded">True when the body succeeded.</param>
    /// <param name="overload">True when it failed with an overload signal.</param>
    /// <param name="inFlight">Bodies running when it completed, itself included.</param>
    public void Record(long start, long latency, bool succeeded, bool overload, int inFlight)
    {
        WindowItems++;
        ObserveInFlight(inFlight);
        if (succeeded)
        {
            _windowStarts[WindowSuccesses] = start;
            _windowLatencies[WindowSuccesses++] = latency;
        }
        else if (overload)
        {
            WindowOverloads++;
        }

        AssertInvariants();
    }

    /// <summary>
    /// Notes, at a completion at <paramref name="now"/>, that <paramref name="started"/> items had started within the window
    /// by then (the ones it counted and the ones still running): the cohorts <see cref="CloseRound"/> reads.
    /// </summary>
    public void CountStarts(long now, int started)
    {
        if (_counts < _countTimes.Length && (_counts == 0 || started > _countedStarts[_counts - 1]))
        {
            _countTimes[_counts] = now;
            _countedStarts[_counts++] = started;
        }
    }

    /// <summary>Forgets the last round's censored sample.</summary>
    public void ClearRound() => RoundRanks = _roundAnswers = 0;

    /// <summary>
    /// Reads a slow-start round as a censored sample, before the window is sorted: a round closes after as many answers as
    /// its limit while answers grow the limit, so about twice as many items started in it and its answers are the fastest
    /// of them (the window's median reads near the lower quartile). A cohort of the round (the items started before one of
    /// the counts <see cref="CountStarts"/> took) is known exactly up to the time since its last start: every item of it at
    /// least that fast has answered. When more than half has, its median is known, and so are the ranks as far above the
    /// median as the known ones reach: the sample is those ranks, the same number on each side of the median, of the cohort
    /// with the most of them. Returns false when no cohort's median is known (the window then stands for the round).
    /// </summary>
    public bool CloseRound(long now)
    {
        RoundRanks = _roundAnswers = 0;
        int bestCount = -1, bestBand = 0;
        for (var c = 0; c < _counts; c++)
        {
            var cutoff = _countTimes[c];
            var known = now - cutoff;
            int answered = 0, within = 0;
            for (var i = 0; i < WindowSuccesses; i++)
            {
                answered += _windowStarts[i] < cutoff ? 1 : 0;
                within += _windowStarts[i] < cutoff && _windowLatencies[i] <= known ? 1 : 0;
            }

            // Ranks 0..within-1 are exact; the band is symmetric around the median rank. A count below the answers is stale
            // (bodies running are read outside the lock): not a cohort.
            var band = (2 * (within - 1 - (_countedStarts[c] / 2))) + 1;
            if (band > bestBand && answered <= _countedStarts[c])
            {
                bestBand = band;
                bestCount = c;
            }
        }

        if (bestCount < 0)
        {
            return false;
        }

        var bestCutoff = _countTimes[bestCount];
        var bestKnown = now - bestCutoff;
        for (var i = 0; i < WindowSuccesses; i++)
        {
            if (_windowStarts[i] < bestCutoff && _windowLatencies[i] <= bestKnown)
            {
                _round[_roundAnswers++] = _windowLatencies[i];
            }
        }

        _round.AsSpan(0, _roundAnswers).Sort();
        var from = _roundAnswers - bestBand;
        _round.AsSpan(from, bestBand).CopyTo(_round);
        _roundAnswers = RoundRanks = bestBand;
        return true;
    }

    /// <summary>Raises the window's peak of bodies running at once to <paramref name="inFlight"/> if higher.</summary>
    public void ObserveInFlight(int inFlight) => WindowPeakInFlight = Math.Max(WindowPeakInFlight, inFlight);

    /// <summary>The slowest latency of the window's successful items (0: none).</summary>
    public long SlowestInWindow()
    {
        long slowest = 0;
        foreach (var latency in _windowLatencies.AsSpan(0, WindowSuccesses))
        {
            slowest = Math.Max(slowest, latency);
        }

        return slowest;
    }

    /// <summary>Sorts the window's latencies and returns them (valid until the next <see cref="Record"/>).</summary>
    public ReadOnlySpan<long> SortWindow()
    {
        var window = _windowLatencies.AsSpan(0, WindowSuccesses);
        window.Sort();
        return window;
    }

    /// <summary>Leaves items that start from <paramref name="end"/> on out of the window, which <paramref name="startedBefore"/> items can then fill at most.</summary>
    public void EndWindowAt(long end, int startedBefore)
    {
        WindowEnd = end;
        WindowEndItems = startedBefore;
    }

    /// <summary>Empties the window; items that started before <paramref name="start"/> will be left out of the next one.</summary>
    public void ResetWindow(long start)
    {
        WindowStart = start;
        WindowEnd = long.MaxValue;
        WindowEndItems = int.MaxValue;
        WindowItems = WindowSuccesses = WindowOverloads = WindowPeakInFlight = _counts = 0;
    }

    /// <summary>
    /// Adds up to <paramref name="share"/> of a window's (sorted) latencies to the pool and recomputes its quantiles; with
    /// <paramref name="ranks"/> above the latencies' count, the items beyond them (not back yet) count as the slowest.
    /// </summary>
    public void AddToPool(ReadOnlySpan<long> sortedLatencies, int share, int ranks = 0)
    {
        if (sortedLatencies.IsEmpty)
        {
            return;
        }

        // A window larger than its share contributes an even spread of its sorted latencies, so its median stays its median;
        // the ranks of a censored sample's items not back yet take its slowest answer.
        ranks = Math.Max(ranks, sortedLatencies.Length);
        var take = Math.Min(ranks, share);
        for (var i = 0; i < take; i++)
        {
            _pool[_poolNext] = sortedLatencies[Math.Min((int)((long)i * ranks / take), sortedLatencies.Length - 1)];
            _poolNext = (_poolNext + 1) % PoolCapacity;
        }

        PoolCount = Math.Min(PoolCount + take, PoolCapacity);
        var sorted = _scratch.AsSpan(0, PoolCount);
        _pool.AsSpan(0, PoolCount).CopyTo(sorted);
        sorted.Sort();

        Baseline = Math.Max(1, sorted[sorted.Length / 2]);
        UpperQuartile = sorted[3 * sorted.Length / 4];
        LowerQuartile = sorted[sorted.Length / 4];
        Spread = Math.Log((double)UpperQuartile / Math.Max(1, LowerQuartile)) / NormalInterquartileRangeInSigmas;
    }

    /// <summary>Empties the pool (its next <see cref="AddToPool"/> sets the baseline afresh); the baseline reads as before until then.</summary>
    public void ClearPool() => PoolCount = _poolNext = 0;

    /// <summary>Index of the first latency in <paramref name="sorted"/> above <paramref name="value"/>.</summary>
    public static int UpperBound(ReadOnlySpan<long> sorted, long value)
    {
        var index = sorted.Length;
        while (index > 0 && sorted[index - 1] > value)
        {
            index--;
        }

        return index;
    }

    [Conditional("DEBUG")]
    private void AssertInvariants()
    {
        Debug.Assert(WindowSuccesses + WindowOverloads <= WindowItems);
        Debug.Assert(WindowSuccesses <= _windowLatencies.Length);
        Debug.Assert(PoolCount <= PoolCapacity);
    }
}
