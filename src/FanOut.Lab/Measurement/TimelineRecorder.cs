using System.Diagnostics;

using FanOut.Lab.Results;

namespace FanOut.Lab.Measurement;

/// <summary>Records one run's time series from the sampler thread into fixed arrays, halving its resolution whenever they fill.</summary>
/// <remarks>
/// Everything is allocated in the constructor, before the run's counters are read: <see cref="Record"/> only writes
/// array slots, so a sample costs no allocation however long the run. When <see cref="MaxPoints"/> points are full,
/// neighbours are merged pairwise (gauges keep their peak, running totals their later value) and each point from then
/// on covers twice as many samples, so a 60 s run ends with at most <see cref="MaxPoints"/> points, peaks intact.
/// Called only by the sampler thread (under its lock), and read by <see cref="ToTimeline"/> after the sampler detached it.
/// </remarks>
public sealed class TimelineRecorder
{
    /// <summary>The most points a timeline holds.</summary>
    public const int MaxPoints = 1000;

    /// <summary>Times are kept to 10 us: finer is below the sampler's resolution and only makes results.json longer.</summary>
    private const int TimeDecimals = 2;

    private readonly InFlightProbe _probe;
    private readonly TimelineSources _sources;
    private readonly double[] _timeMs = new double[MaxPoints];
    private readonly int[] _inFlight = new int[MaxPoints];
    private readonly int[] _poolThreads = new int[MaxPoints];
    private readonly int[] _osThreads = new int[MaxPoints];
    private readonly long[] _queue = new long[MaxPoints];
    private readonly int[] _limit = new int[MaxPoints];
    private readonly long[] _completedTotal = new long[MaxPoints];
    private readonly long[] _rejectedTotal = new long[MaxPoints];
    private readonly int[] _serverInFlight = new int[MaxPoints];
    private long _startTimestamp;
    private long _lastTimestamp;
    private double _firstSampleMs = double.NaN;
    private double _largestGapMs;
    private int _count;
    private int _pending;
    private int _stride = 1;
    private int _samples;

    /// <summary>A recorder that reads <paramref name="probe"/> and <paramref name="sources"/> at every sample.</summary>
    public TimelineRecorder(InFlightProbe probe, TimelineSources sources)
    {
        ArgumentNullException.ThrowIfNull(probe);
        ArgumentNullException.ThrowIfNull(sources);
        _probe = probe;
        _sources = sources;
    }

    /// <summary>Samples recorded (before downsampling).</summary>
    public int Samples => _samples;

    /// <summary>Sets time zero; call before the sampler starts recording.</summary>
    public void Start(long timestamp) => _startTimestamp = timestamp;

    /// <summary>Adds one sample; the runtime's readings come from the sampler, the rest is read here.</summary>
    public void Record(long timestamp, int poolThreads, int osThreads, long queueLength)
    {
        var i = _count;
        var first = _pending == 0;
        _timeMs[i] = Stopwatch.GetElapsedTime(_startTimestamp, timestamp).TotalMilliseconds;
        if (_samples == 0)
        {
            _firstSampleMs = _timeMs[i];
        }
        else
        {
            _largestGapMs = Math.Max(_largestGapMs, Stopwatch.GetElapsedTime(_lastTimestamp, timestamp).TotalMilliseconds);
        }

        _lastTimestamp = timestamp;
        _inFlight[i] = Peak(first, _inFlight[i], _probe.Current);
        _poolThreads[i] = Peak(first, _poolThreads[i], poolThreads);
        _osThreads[i] = Peak(first, _osThreads[i], osThreads);
        _queue[i] = first ? queueLength : Math.Max(_queue[i], queueLength);
        _limit[i] = Peak(first, _limit[i], _sources.Limit?.Invoke() ?? 0);
        _completedTotal[i] = _sources.Completed?.Invoke() ?? 0;
        _rejectedTotal[i] = _sources.Rejected?.Invoke() ?? 0;
        _serverInFlight[i] = Peak(first, _serverInFlight[i], _sources.ServerInFlight?.Invoke() ?? 0);
        _samples++;
        if (++_pending < _stride)
        {
            return;
        }

        _pending = 0;
        if (++_count == MaxPoints)
        {
            Halve();
        }
    }

    /// <summary>The recorded series, trimmed to the points taken; allocates, so call after the run's counters were read.</summary>
    /// <param name="runMs">The run's wall-clock milliseconds.</param>
    /// <param name="decisions">The run's limit decisions, stopped; null when none were recorded.</param>
    public Timeline ToTimeline(double runMs, LimitDecisionRecorder? decisions = null)
    {
        var count = _count + (_pending > 0 ? 1 : 0);
        static T[] Take<T>(T[] values, int count) => values[..count];
        static long[] PerPoint(long[] totals, int count)
        {
            var perPoint = new long[count];
            for (var i = 0; i < count; i++)
            {
                perPoint[i] = totals[i] - (i == 0 ? 0 : totals[i - 1]);
            }

            return perPoint;
        }

        return new Timeline
        {
            RunMs = runMs,
            IntervalMs = count == 0 ? 0 : Math.Max(runMs, _timeMs[count - 1]) / count,
            TimeMs = _timeMs[..count].Select(t => Math.Round(t, TimeDecimals)).ToArray(),
            InFlight = Take(_inFlight, count),
            PoolThreads = Take(_poolThreads, count),
            OsThreads = Take(_osThreads, count),
            QueueLength = Take(_queue, count),
            Limit = _sources.Limit is null ? null : Take(_limit, count),
            Completed = _sources.Completed is null ? null : PerPoint(_completedTotal, count),
            Rejected = _sources.Rejected is null ? null : PerPoint(_rejectedTotal, count),
            ServerInFlight = _sources.ServerInFlight is null ? null : Take(_serverInFlight, count),
            FirstSampleMs = double.IsNaN(_firstSampleMs) ? null : Math.Round(_firstSampleMs, TimeDecimals),
            LargestGapMs = count == 0 ? null : Math.Round(Math.Max(_largestGapMs, count == 0 ? 0 : runMs - _timeMs[count - 1]), TimeDecimals),
            Decisions = decisions?.Decisions(),
            DecisionsDropped = decisions?.Dropped,
        };
    }

    private static int Peak(bool first, int current, int value) => first ? value : Math.Max(current, value);

    /// <summary>Merges neighbouring points pairwise: gauges keep their peak, time and running totals the later value.</summary>
    private void Halve()
    {
        for (var i = 0; i < MaxPoints / 2; i++)
        {
            int a = 2 * i, b = a + 1;
            _timeMs[i] = _timeMs[b];
            _inFlight[i] = Math.Max(_inFlight[a], _inFlight[b]);
            _poolThreads[i] = Math.Max(_poolThreads[a], _poolThreads[b]);
            _osThreads[i] = Math.Max(_osThreads[a], _osThreads[b]);
            _queue[i] = Math.Max(_queue[a], _queue[b]);
            _limit[i] = Math.Max(_limit[a], _limit[b]);
            _completedTotal[i] = _completedTotal[b];
            _rejectedTotal[i] = _rejectedTotal[b];
            _serverInFlight[i] = Math.Max(_serverInFlight[a], _serverInFlight[b]);
        }

        _count = MaxPoints / 2;
        _stride *= 2;
    }
}
