namespace FanOut.AspNetCore.Admission;

/// <summary>
/// Holds a service whose own CPU is its bottleneck at its cores. While the thread pool lags beyond a request's service
/// time, a request beyond the cores only waits for a core, and it waits before the admission, where no service time shows
/// it (docs/server.md, "The cores' hold"). The hold outlasts the lag; a lag back soon after a hold lapsed doubles the next
/// hold, as the law spaces its refused probes, so a CPU-bound service runs more than its cores rarely, and an I/O-bound
/// one whose pool lagged once is held briefly.
/// </summary>
internal sealed class CoresHold
{
    /// <summary>The first hold: many service times of any request worth limiting, short beside a stall's recovery.</summary>
    internal static readonly TimeSpan ShortestHold = TimeSpan.FromSeconds(0.5);

    /// <summary>The longest hold: a CPU-bound service tries more than its cores once in several seconds, each try a spike of waits (docs/server.md).</summary>
    internal static readonly TimeSpan LongestHold = TimeSpan.FromSeconds(8);

    /// <summary>A hold goes on while the lag is above this share of the service time: at the cores the pool still lags a little, and a hold lifted on that lapses into the lag it ended.</summary>
    private const double KeepShare = 0.5;

    /// <summary>Lags below this are the pool's scheduling noise whatever the service time (a work item waits for a thread to wake).</summary>
    private static readonly TimeSpan NoiseFloor = TimeSpan.FromMilliseconds(2);

    private readonly ThreadPoolLag _lag;
    private readonly ServiceTimeEstimate _serviceTime;
    private readonly int _cores;
    private readonly long _shortest;
    private readonly long _longest;

    /// <summary>Guards <see cref="_until"/> (also read without it) and <see cref="_length"/>.</summary>
    private readonly Lock _lock = new();

    /// <summary>When the hold under way lapses, in timestamp ticks (<see cref="long.MinValue"/>: none ever began).</summary>
    private long _until = long.MinValue;

    /// <summary>The length of the hold under way, in timestamp ticks.</summary>
    private long _length;

    public CoresHold(TimeProvider time, ThreadPoolLag lag, ServiceTimeEstimate serviceTime, int cores)
    {
        _lag = lag;
        _serviceTime = serviceTime;
        _cores = cores;
        _shortest = (long)(ShortestHold.TotalSeconds * time.TimestampFrequency);
        _longest = (long)(LongestHold.TotalSeconds * time.TimestampFrequency);
        _length = _shortest;
    }

    /// <summary>How long work waits in the thread pool now, when that is longer than a request takes to serve (and than the pool's noise); else null.</summary>
    public TimeSpan? LagBeyondService => LagBeyond(1);

    /// <summary>The most requests the admission may hold at <paramref name="now"/>: the cores while a hold lasts, else no bound.</summary>
    public int Room(long now)
    {
        var until = Volatile.Read(ref _until);
        var holding = now < until;
        if (LagBeyond(holding ? KeepShare : 1) is null)
        {
            return holding ? _cores : int.MaxValue;
        }

        lock (_lock)
        {
            if (now >= _until)
            {
                // A new hold: twice the last when the lag came back within the last hold's length of its end.
                _length = _until != long.MinValue && now - _until < _length ? Math.Min(2 * _length, _longest) : _shortest;
            }

            Volatile.Write(ref _until, Math.Max(_until, now + _length));
        }

        return _cores;
    }

    private TimeSpan? LagBeyond(double share) =>
        _serviceTime.Median is { } service && _lag.Current is var lag && lag > NoiseFloor && lag > service * share ? lag : null;
}
