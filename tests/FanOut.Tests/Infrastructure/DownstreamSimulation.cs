namespace FanOut.Tests.Infrastructure;

/// <summary>How a simulated downstream with capacity C treats more than C requests at once.</summary>
public enum Overflow
{
    /// <summary>FIFO queue: latency rises (a database, a thread pool).</summary>
    Queue,

    /// <summary>Rejected at once with a <see cref="TimeoutException"/> (a rate limiter, a full connection pool).</summary>
    Reject,

    /// <summary>Processor sharing: every request slows down by n / C (CPU-bound work on C cores).</summary>
    Share,
}

/// <summary>How a simulated downstream's service time varies from one request to the next.</summary>
public enum ServiceTimes
{
    /// <summary>The nominal time +-10% (uniform): a steady downstream.</summary>
    Steady,

    /// <summary>
    /// Lognormal around the nominal median with sigma 0.6, so p99 = 4x the median and p1 = median / 4: the intrinsic spread of
    /// real networks and databases, which the adaptive limit must not read as queueing.
    /// </summary>
    LogNormal,
}

/// <summary>
/// A discrete-event simulation of a fan-out driven by a <see cref="ConcurrencyLimit"/> against a downstream that serves
/// <c>capacity</c> requests at once. Time is a <see cref="ManualTimeProvider"/>: each step jumps to the next completion,
/// so the run is exact and repeatable, and takes no wall-clock time. The simulation acts as the fan-out's workers: it keeps
/// as many requests in flight as the limit grants.
/// </summary>
public sealed class DownstreamSimulation(int capacity, Overflow overflow, TimeSpan serviceTime, int seed = 1, ManualTimeProvider? clock = null, ServiceTimes serviceTimes = ServiceTimes.Steady)
{
    /// <summary>Sigma of <see cref="ServiceTimes.LogNormal"/>: ln(4) / 2.326 (the p99 z-score) puts p99 at 4x the median.</summary>
    public const double LogNormalSigma = 0.596;

    private readonly Random _random = new(seed);
    private readonly List<Request> _inService = [];
    private readonly Queue<Request> _queue = new();
    private readonly List<(TimeSpan At, int Limit)> _trace = [];

    public ManualTimeProvider Clock { get; } = clock ?? new();

    /// <summary>The limit after each completed item.</summary>
    public IReadOnlyList<(TimeSpan At, int Limit)> Trace => _trace;

    public TimeSpan Elapsed { get; private set; }

    public int Rejected { get; private set; }

    /// <summary>Runs <paramref name="items"/> items through <paramref name="limit"/>; returns the limits seen over the last <paramref name="tailFraction"/> of them.</summary>
    public int[] Run(ConcurrencyLimit limit, int items, double tailFraction = 0.3)
    {
        var start = Clock.Now;
        var started = 0;
        var completed = 0;
        while (completed < items)
        {
            while (started < items && limit.TryAcquire())
            {
                Start(new Request(Clock.GetTimestamp(), ServiceTicks()));
                started++;
            }

            var done = NextCompletion();
            limit.OnItemCompleted(done.StartTimestamp, done.Rejected ? new TimeoutException("rejected") : null, canceled: false);
            limit.Release();
            completed++;
            _trace.Add((Clock.Now - start, limit.Current));
        }

        Elapsed = Clock.Now - start;
        var tail = (int)(items * tailFraction);
        return _trace.Skip(items - tail).Select(t => t.Limit).ToArray();
    }

    private long ServiceTicks() => serviceTimes == ServiceTimes.LogNormal
        ? Math.Max(1, (long)(serviceTime.Ticks * Math.Exp(LogNormalSigma * StandardNormal())))
        : (long)(serviceTime.Ticks * (0.9 + (0.2 * _random.NextDouble()))); // +-10% jitter

    /// <summary>Box-Muller from the seeded generator, so a run is repeatable.</summary>
    private double StandardNormal()
    {
        var u1 = 1.0 - _random.NextDouble();
        var u2 = _random.NextDouble();
        return Math.Sqrt(-2.0 * Math.Log(u1)) * Math.Cos(2.0 * Math.PI * u2);
    }

    private void Start(Request request)
    {
        if (_inService.Count(r => !r.Rejected) < capacity || overflow == Overflow.Share)
        {
            _inService.Add(request);
        }
        else if (overflow == Overflow.Reject)
        {
            request.Remaining = serviceTime.Ticks / 50; // a fast "no"
            request.Rejected = true;
            _inService.Add(request);
            Rejected++;
        }
        else
        {
            _queue.Enqueue(request);
        }
    }

    private Request NextCompletion()
    {
        // Served requests progress at rate 1, or C/n each when n > C share C processors. Rejections always at rate 1.
        var served = _inService.Count(r => !r.Rejected);
        double Rate(Request r) => overflow == Overflow.Share && !r.Rejected && served > capacity ? (double)capacity / served : 1.0;
        var next = _inService.MinBy(r => r.Remaining / Rate(r))!;
        var step = (long)Math.Ceiling(next.Remaining / Rate(next));
        foreach (var r in _inService)
        {
            r.Remaining -= step * Rate(r);
        }

        Clock.Advance(TimeSpan.FromTicks(step));
        _inService.Remove(next);
        if (!next.Rejected && _queue.Count > 0)
        {
            _inService.Add(_queue.Dequeue());
        }

        return next;
    }

    private sealed class Request(long startTimestamp, double remaining)
    {
        public long StartTimestamp { get; } = startTimestamp;

        public double Remaining { get; set; } = remaining;

        public bool Rejected { get; set; }
    }
}
