namespace FanOut.AspNetCore.Admission;

/// <summary>A running estimate of the median time an admitted request takes to be served: one number, updated lock-free.</summary>
/// <remarks>
/// Each served request moves the estimate one step toward its own time, up when it took longer and down when it took
/// less (the stochastic approximation of a median: a machine's stall that holds one request for a second moves it one step,
/// where it would drag a mean). A step is a <see cref="StepDivisor"/>th of the estimate, so the estimate follows a service
/// that became twice as fast or slow within about <see cref="StepDivisor"/> requests (a fraction of a second at the rates
/// worth limiting) and jitters by a few percent around the median of a steady one. The first request served seeds it.
/// </remarks>
internal sealed class ServiceTimeEstimate
{
    /// <summary>The estimate moves by its own value over this per request.</summary>
    internal const int StepDivisor = 32;

    private readonly TimeProvider _time;

    /// <summary>The estimate in <see cref="TimeProvider.GetTimestamp"/> ticks; 0 until a request was served. Changed by compare-and-swap only.</summary>
    private long _ticks;

    public ServiceTimeEstimate(TimeProvider time) => _time = time;

    /// <summary>The estimated median; <see langword="null"/> until a request was served.</summary>
    public TimeSpan? Median
    {
        get
        {
            var ticks = Volatile.Read(ref _ticks);
            return ticks == 0 ? null : TimeSpan.FromSeconds((double)ticks / _time.TimestampFrequency);
        }
    }

    /// <summary>Moves the estimate one step toward <paramref name="served"/>, the time one admitted request took.</summary>
    public void Add(TimeSpan served)
    {
        var ticks = Math.Max(1, (long)(served.TotalSeconds * _time.TimestampFrequency));
        var seen = Volatile.Read(ref _ticks);
        while (true)
        {
            var step = Math.Max(1, seen / StepDivisor);
            var next = seen == 0 ? ticks : ticks > seen ? seen + step : ticks < seen ? Math.Max(1, seen - step) : seen;
            var found = Interlocked.CompareExchange(ref _ticks, next, seen);
            if (found == seen)
            {
                return;
            }

            seen = found;
        }
    }
}
