using System.Diagnostics;

using FanOut.Diagnostics;

namespace FanOut;

/// <summary>
/// A limit that slow-starts (doubles every round while latency stays flat, extends a round that looks slower but not
/// conclusively so) and meanwhile measures the uncontended latency over a pooled sample of the rounds that read
/// uncontended, then holds within a latency band around that baseline: it grows while the median of a window of
/// at least <see cref="AdaptiveLimitOptions.MinWindowSamples"/> items stays near the baseline and backs off in proportion to
/// the rise above the tolerance (a gradient, as in Netflix's Gradient2 and Envoy's adaptive concurrency filter), or by
/// <see cref="AdaptiveLimitOptions.BackoffRatio"/> on an overload failure (AIMD). The algorithm is described in docs/library.md.
/// </summary>
internal sealed class AdaptiveConcurrencyLimit : ConcurrencyLimit
{
    /// <summary>Latencies the baseline is the median of (a ring: the newest uncontended samples win).</summary>
    private const int PoolCapacity = 128;

    /// <summary>The most latencies a window keeps; beyond it a window closes early (only limits above this are affected).</summary>
    private const int MaxWindowCapacity = 4096;

    /// <summary>
    /// The most latencies one slow-start round adds to the pool. Rounds double, so uncapped the last round would be half the
    /// pool, and the last round is the one most likely to have queued a little without showing it; capped, the low rounds
    /// (certainly uncontended) keep most of the weight.
    /// </summary>
    private const int SlowStartRoundShare = 16;

    /// <summary>
    /// A slow-start round that reads above the growth threshold but not conclusively is extended (the limit held, its
    /// samples kept) until it holds this many latencies or two rounds' worth: the test then has the samples a queue at 2C
    /// needs to show against a lognormal's spread, instead of doubling on (and pooling) a round that may have queued.
    /// </summary>
    private const int HoldSamples = 32;

    /// <summary>
    /// After slow start a window is one round; one shorter than <see cref="AdaptiveLimitOptions.MinWindowSamples"/> decides
    /// only when it reads at or below the baseline (and so grows), else it is extended to MinWindowSamples first.
    /// </summary>
    private const double ClearlyUncontended = 1.0;

    /// <summary>Set by a decision that extends the current window instead of closing it.</summary>
    private bool _holding;

    /// <summary>Items the current (extended) window runs to; 0 for an ordinary window.</summary>
    private int _holdUntil;


    private readonly AdaptiveLimitOptions _options;
    private readonly TimeProvider _time;
    private readonly Func<Exception, bool> _isOverload;

    /// <summary>Below this latency ratio the limit grows; between it and the tolerance it holds.</summary>
    private readonly double _growBelow;

    /// <summary>Guards the window and the algorithm's state; user code (the overload test) runs before it is taken.</summary>
    private readonly Lock _lock = new();

    private volatile int _limit;
    private int _peak;

    /// <summary>True until the first back-off, like TCP's slow start: the limit doubles every round (one window = one round).</summary>
    private bool _slowStart = true;

    /// <summary>
    /// The highest limit slow start found uncontended. After slow start, windows run at half of it or less refresh the
    /// baseline pool (Envoy's re-measurement at low concurrency, taken when the limit is low anyway).
    /// </summary>
    private int _cleanLimit;

    /// <summary>Uncontended latencies, in timestamp ticks; <see cref="_baseline"/> is their median.</summary>
    private readonly long[] _pool = new long[PoolCapacity];
    private int _poolCount;
    private int _poolNext;

    /// <summary>Median latency of the pool, in timestamp ticks: the latency without queueing. 0 until measured.</summary>
    private double _baseline;

    /// <summary>The pool's 75th percentile, in timestamp ticks: the slow-start round test counts the items above it.</summary>
    private long _upperQuartile;

    /// <summary>The pool's spread: the standard deviation of log latency, estimated from its interquartile range.</summary>
    private double _spread;

    /// <summary>Sorting space for the pool's median, so a decision never allocates.</summary>
    private readonly long[] _scratch = new long[PoolCapacity];

    /// <summary>Items that started before this timestamp ran under an older limit and are left out of the window.</summary>
    private long _windowStart;
    private int _windowItems;
    private int _windowSuccesses;

    /// <summary>Latencies of the window's successful items; the window's latency is their median (one GC pause or timer hiccup must not read as congestion).</summary>
    private readonly long[] _windowLatencies;
    private int _windowOverloads;
    private int _windowPeakInFlight;

    public AdaptiveConcurrencyLimit(AdaptiveLimitOptions options)
    {
        options.Validate();
        _options = options;
        _time = options.TimeProvider;
        _isOverload = options.IsOverload ?? AdaptiveLimitOptions.IsOverloadByDefault;
        _growBelow = 1 + ((options.Tolerance - 1) / 2);
        _limit = options.InitialLimit;
        _peak = options.InitialLimit;
        _cleanLimit = options.InitialLimit;
        _windowStart = long.MinValue;
        _windowLatencies = new long[Math.Min(Math.Max(options.MaxLimit, options.MinWindowSamples), MaxWindowCapacity)];
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
                return TimeSpan.FromSeconds(_baseline / _time.TimestampFrequency);
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
                return _slowStart;
            }
        }
    }

    internal override bool WantsSamples => true;

    internal override int MaxCurrent => _options.MaxLimit;

    internal override long GetTimestamp() => _time.GetTimestamp();

    internal override TimeProvider Clock => _time;

    internal override bool IsOverload(Exception failure) => _isOverload(failure);

    internal override long TimestampFrequency => _time.TimestampFrequency;

    internal override void OnItemCompleted(long startTimestamp, Exception? failure, bool canceled)
    {
        if (canceled)
        {
            return; // latency and failures of a canceled run describe the cancellation, not the downstream
        }

        // The overload test is user code: run it before taking the lock.
        var overload = failure is not null && _isOverload(failure);
        var now = _time.GetTimestamp();
        var inFlight = InFlight;
        int before, after;
        lock (_lock)
        {
            AssertInvariants();
            if (startTimestamp < _windowStart)
            {
                return;
            }

            _windowItems++;
            _windowPeakInFlight = Math.Max(_windowPeakInFlight, inFlight);
            if (failure is null)
            {
                _windowLatencies[_windowSuccesses++] = now - startTimestamp;
            }
            else if (overload)
            {
                _windowOverloads++;
            }

            before = _limit;
            if (_windowItems < WindowSize(before) && _windowOverloads == 0)
            {
                return;
            }

            after = Decide(before);
            _limit = after;
            if (after > _peak)
            {
                Volatile.Write(ref _peak, after);
            }

            if (_holding)
            {
                _holding = false;
                _holdUntil = _windowItems + before;
                return;
            }

            _holdUntil = 0;
            _windowStart = after == before ? _windowStart : now;
            _windowItems = _windowSuccesses = _windowOverloads = _windowPeakInFlight = 0;
        }

        if (after != before)
        {
            FanOutMetrics.RecordLimit(after, Kind);
            if (after > before)
            {
                OnCurrentIncreased();
            }
        }
    }

    /// <summary>
    /// Items per window: one round (the limit), so the ramp costs one round trip per doubling, except that the rounds at
    /// limits 1 and 2 are two rounds long (the baseline's first samples: 2 + 4 rather than 1 + 2, so one lucky or unlucky
    /// item does not set it), and a window a decision extended runs to <see cref="_holdUntil"/>.
    /// </summary>
    private int WindowSize(int limit) =>
        Math.Min(Math.Max(_slowStart && limit <= 2 ? 2 * limit : limit, _holdUntil), _windowLatencies.Length);

    /// <summary>The next limit, at the end of a window (or at once on an overload failure: one back-off per window).</summary>
    private int Decide(int limit)
    {
        if (_windowOverloads > 0)
        {
            ExitSlowStart(limit);
            return Math.Clamp((int)(limit * _options.BackoffRatio), _options.MinLimit, Math.Max(_options.MinLimit, limit - 1));
        }

        if (_windowSuccesses == 0)
        {
            return limit;
        }

        var window = _windowLatencies.AsSpan(0, _windowSuccesses);
        window.Sort();
        var latency = (double)window[window.Length / 2];
        var filled = _windowPeakInFlight >= limit;
        return _slowStart ? DecideInSlowStart(limit, window, latency, filled) : DecideAfterSlowStart(limit, window, latency, filled);
    }

    private int DecideInSlowStart(int limit, ReadOnlySpan<long> window, double latency, bool filled)
    {
        if (_poolCount >= 3)
        {
            // Is this round slower than the rounds before it? Queueing delays every item, so most of the round lands above
            // the pool's upper quartile, where a quarter of uncontended items land: a rank test, which holds whatever the
            // spread of the latencies, unlike a ratio of medians of a few items, which a lognormal makes read 1.5x by chance
            // one round in four. More than two thirds of the round must be above it (all of a round under 8 items), which
            // chance does about once in a hundred rounds; queueing at 4x the capacity does almost always, at 2x often.
            // The median must also have risen past the growth threshold by more than twice its standard error (about
            // 1.25 sigma / sqrt(n) in log terms, sigma being the pool's spread): a steady downstream's small drift (a busy
            // CPU, timer jitter) is not a queue, and with a lognormal spread a round of 4 must read about 4x, of 64 about 1.6x.
            var above = window.Length - UpperBound(window, _upperQuartile);
            var needed = window.Length < 8 ? window.Length : (2 * window.Length / 3) + 1;
            var ratio = latency / _baseline;
            var standardError = 1.2533 * _spread * Math.Sqrt((1.0 / window.Length) + (1.0 / _poolCount));
            if (window.Length >= 2 && above >= needed && ratio > _growBelow * Math.Exp(2 * standardError))
            {
                // Gradient: by Little's law the round's queue drains when the limit is limit / ratio; aim at the growth
                // threshold, but trust the jump at most 4x (the ratio of a small round is noisy).
                ExitSlowStart(limit);
                return Math.Clamp(Math.Max((int)(limit * _growBelow / ratio), limit / 4), _options.MinLimit, Math.Max(_options.MinLimit, limit - 1));
            }

            if (ratio > _growBelow && window.Length < Math.Max(2 * limit, HoldSamples) && _windowItems + limit <= _windowLatencies.Length)
            {
                // Suspicious but not conclusive (a round of 8 at 2C reads 2x, which a lognormal's spread can also make):
                // hold the limit and extend the round, so the test above sees more samples next time. Doubling here is
                // how slow start used to miss a 2C round and reach 4C.
                _holding = true;
                return limit;
            }
        }

        // Only rounds that read as uncontended feed the baseline (the first two, at limits 1 and 2, always): a round that
        // queued a little without proving it used to push the baseline up, and the limit then settled at 1.5-2C.
        if (limit <= 2 || latency <= _baseline * _growBelow)
        {
            AddToPool(window, SlowStartRoundShare);
        }

        _cleanLimit = Math.Max(_cleanLimit, limit);

        // Grow only when the round used the whole limit: an app-limited round says nothing about more concurrency.
        return filled ? (int)Math.Min((long)limit * 2, _options.MaxLimit) : limit;
    }

    /// <summary>Index of the first latency in sorted <paramref name="sorted"/> above <paramref name="value"/>.</summary>
    private static int UpperBound(ReadOnlySpan<long> sorted, long value)
    {
        var index = sorted.Length;
        while (index > 0 && sorted[index - 1] > value)
        {
            index--;
        }

        return index;
    }

    private int DecideAfterSlowStart(int limit, ReadOnlySpan<long> window, double latency, bool filled)
    {
        if (window.Length < _options.MinWindowSamples && _windowItems + limit <= _windowLatencies.Length
            && !(filled && latency < _baseline * ClearlyUncontended))
        {
            // A round of a few items may grow the limit when it reads no queue at all (faster recovery from an early
            // exit or a deep back-off: a window per round, not per 32 items), but back-offs and holds need the samples
            // MinWindowSamples buys, so anything else extends the window to it.
            _holding = true;
            return limit;
        }

        if (limit * 2 <= _cleanLimit || _poolCount == 0)
        {
            // Half of a level slow start found uncontended: this window measured the baseline again. This is what keeps a
            // baseline that came out too low (or a downstream that got slower) from pushing the limit to its minimum. With an
            // empty pool (an overload ended slow start before a round completed) the first window is the best there is.
            AddToPool(window, PoolCapacity);
        }

        var ratio = latency / _baseline;
        if (ratio > _options.Tolerance)
        {
            // Gradient: shrink so that, by Little's law, the queue the ratio reveals drains to the growth threshold, by at
            // most half per window. Windows hold at least MinWindowSamples items, so noise alone rarely gets here.
            var target = (int)(limit * _growBelow / ratio);
            return Math.Clamp(Math.Max(target, limit / 2), _options.MinLimit, Math.Max(_options.MinLimit, limit - 1));
        }

        if (ratio < _growBelow && filled)
        {
            // Grow toward the limit at which, by the same law, latency would reach the growth threshold: far below it (ratio
            // near 1, no queue) by a quarter a window, close to it by a step or two, so the limit approaches the band from
            // below rather than overshooting it.
            var step = Math.Max(1, (int)(limit * Math.Min(0.25, (_growBelow / ratio) - 1)));
            return (int)Math.Min((long)limit + step, _options.MaxLimit);
        }

        return limit;
    }

    private void ExitSlowStart(int limit)
    {
        if (_slowStart)
        {
            _slowStart = false;
            _cleanLimit = Math.Max(_options.MinLimit, Math.Min(_cleanLimit, limit / 2));
        }
    }

    /// <summary>Adds up to <paramref name="share"/> of a window's (sorted) latencies to the baseline pool and recomputes the baseline.</summary>
    private void AddToPool(ReadOnlySpan<long> latencies, int share)
    {
        // A window larger than its share contributes an even spread of its sorted latencies, so its median stays its median.
        var take = Math.Min(latencies.Length, share);
        for (var i = 0; i < take; i++)
        {
            _pool[_poolNext] = latencies[(int)((long)i * latencies.Length / take)];
            _poolNext = (_poolNext + 1) % PoolCapacity;
        }

        _poolCount = Math.Min(_poolCount + take, PoolCapacity);
        var sorted = _scratch.AsSpan(0, _poolCount);
        _pool.AsSpan(0, _poolCount).CopyTo(sorted);
        sorted.Sort();
        _baseline = Math.Max(1, sorted[sorted.Length / 2]);
        _upperQuartile = sorted[(3 * sorted.Length) / 4];
        _spread = Math.Log((double)_upperQuartile / Math.Max(1, sorted[sorted.Length / 4])) / 1.349; // a normal's IQR is 1.349 sigma
    }

    [Conditional("DEBUG")]
    private void AssertInvariants()
    {
        Debug.Assert(_lock.IsHeldByCurrentThread);
        Debug.Assert(_limit >= _options.MinLimit && _limit <= _options.MaxLimit);
        Debug.Assert(_peak >= _limit);
        Debug.Assert(_windowSuccesses + _windowOverloads <= _windowItems);
        Debug.Assert(_poolCount <= PoolCapacity);
    }
}
