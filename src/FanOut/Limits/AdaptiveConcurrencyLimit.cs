using System.Diagnostics;

using FanOut.Diagnostics;

namespace FanOut;

/// <summary>
/// A limit that slow-starts (doubles every window while latency stays flat), then holds within a latency band and backs off
/// in proportion to the latency rise (a gradient, as in Netflix's Gradient2 and Envoy's adaptive concurrency filter) or by
/// <see cref="AdaptiveLimitOptions.BackoffRatio"/> on an overload failure (AIMD). The algorithm is described in docs/library.md.
/// </summary>
internal sealed class AdaptiveConcurrencyLimit : ConcurrencyLimit
{
    private readonly AdaptiveLimitOptions _options;
    private readonly TimeProvider _time;
    private readonly Func<Exception, bool> _isOverload;

    /// <summary>Below this latency ratio the limit grows; between it and the tolerance it holds.</summary>
    private readonly double _growBelow;

    /// <summary>Guards the window and the algorithm's state; user code (the overload test) runs before it is taken.</summary>
    private readonly Lock _lock = new();

    private volatile int _limit;
    private int _peak;

    /// <summary>True until the first back-off, like TCP's slow start: growth doubles instead of adding limit/16.</summary>
    private bool _slowStart = true;

    /// <summary>Lowest mean item latency of any window, in timestamp ticks: the latency without queueing. 0 until measured.</summary>
    private double _baseline;

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
        _windowStart = long.MinValue;
        _windowLatencies = new long[options.MaxLimit + 1];
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

    internal override bool WantsSamples => true;

    internal override int MaxCurrent => _options.MaxLimit;

    internal override long GetTimestamp() => _time.GetTimestamp();

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
            if (_windowItems < before && _windowOverloads == 0)
            {
                return;
            }

            after = Decide(before);
            _limit = after;
            if (after > _peak)
            {
                Volatile.Write(ref _peak, after);
            }

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

    /// <summary>The next limit, at the end of a window (or at once on an overload failure: one back-off per window).</summary>
    private int Decide(int limit)
    {
        if (_windowOverloads > 0)
        {
            _slowStart = false;
            return Math.Clamp((int)(limit * _options.BackoffRatio), _options.MinLimit, Math.Max(_options.MinLimit, limit - 1));
        }

        if (_windowSuccesses == 0)
        {
            return limit;
        }

        var samples = _windowLatencies.AsSpan(0, _windowSuccesses);
        samples.Sort();
        var latency = (double)samples[samples.Length / 2];
        if (_baseline <= 0 || latency < _baseline)
        {
            _baseline = latency;
        }

        var ratio = latency / _baseline;
        if (ratio > _options.Tolerance)
        {
            // Gradient: shrink so that, by Little's law, the queue the ratio reveals drains to the bottom of the band,
            // but by at most a quarter per window (one noisy window must not collapse the limit; a real overload
            // keeps every window above the tolerance, so the limit still falls geometrically).
            _slowStart = false;
            var target = (int)(limit * _growBelow / ratio);
            return Math.Clamp(Math.Max(target, limit * 3 / 4), _options.MinLimit, Math.Max(_options.MinLimit, limit - 1));
        }

        // Grow only when the window used the whole limit: an app-limited window says nothing about more concurrency.
        if (ratio < _growBelow && _windowPeakInFlight >= limit)
        {
            // Slow start doubles; after the first back-off, growth is additive, about 6% a window (at least 1), so the limit
            // probes past the band's edge by at most one step before a window shows the extra queue.
            var grown = _slowStart ? (long)limit * 2 : limit + Math.Max(1, limit / 16);
            return (int)Math.Min(grown, _options.MaxLimit);
        }

        return limit;
    }

    [Conditional("DEBUG")]
    private void AssertInvariants()
    {
        Debug.Assert(_lock.IsHeldByCurrentThread);
        Debug.Assert(_limit >= _options.MinLimit && _limit <= _options.MaxLimit);
        Debug.Assert(_peak >= _limit);
        Debug.Assert(_windowSuccesses + _windowOverloads <= _windowItems);
    }
}
