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
/// as many requests in flight as the limit grants. With <c>timers</c>, items start through the limit's own clock hook
/// (as the fan-out's workers do) and the clock's timers fire at their due times between completions, so the adaptive
/// limit's slow-start ramp runs as it does for real; without, slow start grows per round only. A rejection comes back after
/// <c>rejectionTime</c>, by default a fiftieth of the service time.
/// </summary>
public sealed class DownstreamSimulation(int capacity, Overflow overflow, TimeSpan serviceTime, int seed = 1, ManualTimeProvider? clock = null, ServiceTimes serviceTimes = ServiceTimes.Steady, bool timers = false, TimeSpan? rejectionTime = null)
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

    /// <summary>Calls made, rejected ones included.</summary>
    public int Calls { get; private set; }

    /// <summary>Items that completed successfully (each item is retried until it does, as the fan-out's retry-on-overload would).</summary>
    public int Succeeded { get; private set; }

    /// <summary>The most calls in flight at once.</summary>
    public int PeakInFlight { get; private set; }

    /// <summary>When the last item started, from the start of the run.</summary>
    public TimeSpan LastStart { get; private set; }

    /// <summary>Runs <paramref name="items"/> items through <paramref name="limit"/>; returns the limits seen over the last <paramref name="tailFraction"/> of them.</summary>
    public int[] Run(ConcurrencyLimit limit, int items, double tailFraction = 0.3, bool retryRejected = false)
    {
        var start = Clock.Now;
        var started = 0;
        var retries = 0;
        var completed = 0;
        while (completed < items)
        {
            while ((started < items || retries > 0) && limit.TryAcquire())
            {
                var timestamp = timers ? limit.RecordStart() : Clock.GetTimestamp();
                Start(new Request(timestamp, ServiceTicks()));
                if (retries > 0)
                {
                    retries--;
                }
                else
                {
                    started++;
                    LastStart = Clock.Now - start;
                }
            }

            PeakInFlight = Math.Max(PeakInFlight, limit.InFlight);
            var done = NextCompletion();
            if (done is null)
            {
                continue; // a timer fired first
            }

            // A rejection answers fast, as a TimeoutException would, which the default overload test reads as overload.
            limit.RecordCompletion(done.StartTimestamp, done.Rejected ? ItemOutcome.Overloaded : ItemOutcome.Succeeded);
            limit.Release();
            if (done.Rejected && retryRejected)
            {
                retries++;
                continue;
            }

            Succeeded += done.Rejected ? 0 : 1;
            completed++;
            _trace.Add((Clock.Now - start, limit.Current));
        }

        Elapsed = Clock.Now - start;
        var tail = (int)(items * tailFraction);
        return _trace.Skip(items - tail).Select(t => t.Limit).ToArray();
    }

    private long ServiceTicks() => serviceTimes == ServiceTimes.LogNormal
        ? Math.Max(1, (long)(serviceTime.Ticks * Math.Exp(LogNormalSigma * _random.NextStandardNormal())))
        : (long)(serviceTime.Ticks * (0.9 + (0.2 * _random.NextDouble()))); // +-10% jitter

    private void Start(Request request)
    {
        Calls++;
        if (_inService.Count(r => !r.Rejected) < capacity || overflow == Overflow.Share)
        {
            _inService.Add(request);
        }
        else if (overflow == Overflow.Reject)
        {
            request.Remaining = rejectionTime?.Ticks ?? serviceTime.Ticks / 50; // a fast "no"
            request.Rejected = true;
            _inService.Add(request);
            Rejected++;
        }
        else
        {
            _queue.Enqueue(request);
        }
    }

    /// <summary>Advances to the next completion and returns it, or to the next timer (which fires) if that comes first: null.</summary>
    private Request? NextCompletion()
    {
        // Served requests progress at rate 1, or C/n each when n > C share C processors. Rejections always at rate 1.
        var served = _inService.Count(r => !r.Rejected);
        double Rate(Request r) => overflow == Overflow.Share && !r.Rejected && served > capacity ? (double)capacity / served : 1.0;
        var next = _inService.MinBy(r => r.Remaining / Rate(r))!;
        var step = (long)Math.Ceiling(next.Remaining / Rate(next));
        if (timers && Clock.NextTimerDue is { } due && due.Ticks - Clock.Now.Ticks < step)
        {
            var untilTimer = Math.Max(0, due.Ticks - Clock.Now.Ticks);
            foreach (var r in _inService)
            {
                r.Remaining -= untilTimer * Rate(r);
            }

            Clock.SetTo(due);
            return null;
        }

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
