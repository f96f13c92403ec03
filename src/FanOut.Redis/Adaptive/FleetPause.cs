using System.Diagnostics;

namespace FanOut.Redis.Adaptive;

/// <summary>
/// This process's copy of the fleet pause a retry-after hint started: while it is active no idle lease is handed out here
/// (<see cref="LocalLeases.TryTakeIdle"/>) and Redis grants none. The pause's end is the server's; it reaches each process as
/// the time left, which this turns into a deadline on the options' clock (so a process learns of it late, never early).
/// </summary>
internal sealed class FleetPause(TimeProvider time, WakeSignal wake)
{
    /// <summary>Guards <see cref="_until"/> against an end racing an extension; never held while code outside this class runs.</summary>
    private readonly Lock _lock = new();

    /// <summary>When the pause ends, a timestamp of <see cref="TimeProvider"/> (meaningful while <see cref="_active"/>).</summary>
    private long _until;

    private volatile bool _active;

    /// <summary>True while the fleet is paused: read on the hot path (a volatile read).</summary>
    public bool IsActive => _active;

    /// <summary>How long the pause has left (zero or less when it is over).</summary>
    public TimeSpan Remaining
    {
        get
        {
            lock (_lock)
            {
                return _active ? time.GetElapsedTime(time.GetTimestamp(), _until) : TimeSpan.Zero;
            }
        }
    }

    /// <summary>Pauses until <paramref name="milliseconds"/> from now, unless a pause already lasts longer; wakes the budget loop.</summary>
    public void Extend(long milliseconds)
    {
        if (milliseconds <= 0)
        {
            return;
        }

        var until = time.GetTimestamp() + (long)(milliseconds / 1000.0 * time.TimestampFrequency);
        lock (_lock)
        {
            AssertInvariants();
            if (!_active || until > _until)
            {
                _until = until;
            }

            _active = true;
        }

        wake.Set();
    }

    /// <summary>Ends the pause if its time is up.</summary>
    /// <returns>True when this call ended it.</returns>
    public bool TryEnd()
    {
        lock (_lock)
        {
            AssertInvariants();
            if (!_active || time.GetTimestamp() < _until)
            {
                return false;
            }

            _active = false;
            return true;
        }
    }

    [Conditional("DEBUG")]
    private void AssertInvariants() => Debug.Assert(_lock.IsHeldByCurrentThread);
}
