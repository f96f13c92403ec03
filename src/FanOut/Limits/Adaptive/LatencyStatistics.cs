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

    private int _poolNext;

    /// <summary>Creates the statistics for a limit that never exceeds <paramref name="maxLimit"/>.</summary>
    public LatencyStatistics(int maxLimit, int minWindowSamples)
    {
        _windowLatencies = new long[Math.Min(Math.Max(maxLimit, minWindowSamples), MaxWindowCapacity)];
        WindowStart = long.MinValue;
    }

    /// <summary>Latencies in the pool.</summary>
    public int PoolCount { get; private set; }

    /// <summary>Median latency of the pool, in timestamp ticks: the latency without queueing. 0 until measured.</summary>
    public double Baseline { get; private set; }

    /// <summary>The pool's 75th percentile, in timestamp ticks: the slow-start round test counts the items above it.</summary>
    public long UpperQuartile { get; private set; }

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

    /// <summary>How many latencies a window can hold.</summary>
    public int WindowCapacity => _windowLatencies.Length;

    /// <summary>Counts one completed item in the window.</summary>
    /// <param name="latency">Its latency in timestamp ticks (successes only).</param>
    /// <param name="succeeded">True when the body succeeded.</param>
    /// <param name="overload">True when it failed with an overload signal.</param>
    /// <param name="inFlight">Bodies running when it completed, itself included.</param>
    public void Record(long latency, bool succeeded, bool overload, int inFlight)
    {
        WindowItems++;
        ObserveInFlight(inFlight);
        if (succeeded)
        {
            _windowLatencies[WindowSuccesses++] = latency;
        }
        else if (overload)
        {
            WindowOverloads++;
        }

        AssertInvariants();
    }

    /// <summary>Raises the window's peak of bodies running at once to <paramref name="inFlight"/> if higher.</summary>
    public void ObserveInFlight(int inFlight) => WindowPeakInFlight = Math.Max(WindowPeakInFlight, inFlight);

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
        WindowItems = WindowSuccesses = WindowOverloads = WindowPeakInFlight = 0;
    }

    /// <summary>Adds up to <paramref name="share"/> of a window's (sorted) latencies to the pool and recomputes its quantiles.</summary>
    public void AddToPool(ReadOnlySpan<long> sortedLatencies, int share)
    {
        if (sortedLatencies.IsEmpty)
        {
            return;
        }

        // A window larger than its share contributes an even spread of its sorted latencies, so its median stays its median.
        var take = Math.Min(sortedLatencies.Length, share);
        for (var i = 0; i < take; i++)
        {
            _pool[_poolNext] = sortedLatencies[(int)((long)i * sortedLatencies.Length / take)];
            _poolNext = (_poolNext + 1) % PoolCapacity;
        }

        PoolCount = Math.Min(PoolCount + take, PoolCapacity);
        var sorted = _scratch.AsSpan(0, PoolCount);
        _pool.AsSpan(0, PoolCount).CopyTo(sorted);
        sorted.Sort();

        Baseline = Math.Max(1, sorted[sorted.Length / 2]);
        UpperQuartile = sorted[3 * sorted.Length / 4];
        Spread = Math.Log((double)UpperQuartile / Math.Max(1, sorted[sorted.Length / 4])) / NormalInterquartileRangeInSigmas;
    }

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
