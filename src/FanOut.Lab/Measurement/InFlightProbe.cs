using System.Diagnostics;

namespace FanOut.Lab.Measurement;

/// <summary>Counts the items whose work is running right now and remembers the peak.</summary>
/// <remarks>
/// Workloads enter the probe when an item's work starts and leave it when it ends, so the peak is
/// measured, not read off a configuration as the seeds did. Two interlocked operations per item
/// (plus a compare-exchange only when a new peak is set) keep the cost in the nanoseconds.
/// </remarks>
public sealed class InFlightProbe
{
    private int _current;
    private int _peak;
    private int _started;

    /// <summary>Items in flight now.</summary>
    public int Current => Volatile.Read(ref _current);

    /// <summary>The most items in flight at once since the last <see cref="Reset"/>.</summary>
    public int Peak => Volatile.Read(ref _peak);

    /// <summary>Items started since the last <see cref="Reset"/>.</summary>
    public int Started => Volatile.Read(ref _started);

    /// <summary>Marks one item's work as started; dispose the scope when it ends.</summary>
    public Scope Enter()
    {
        Interlocked.Increment(ref _started);
        var now = Interlocked.Increment(ref _current);
        var peak = Volatile.Read(ref _peak);
        // Lost races only ever retry with a larger peak, so this loop ends after a few rounds.
        while (now > peak)
        {
            var seen = Interlocked.CompareExchange(ref _peak, now, peak);
            if (seen == peak)
            {
                break;
            }

            peak = seen;
        }

        return new Scope(this);
    }

    /// <summary>Zeroes the counters between runs.</summary>
    public void Reset()
    {
        AssertInvariants();
        Volatile.Write(ref _current, 0);
        Volatile.Write(ref _peak, 0);
        Volatile.Write(ref _started, 0);
    }

    private void Exit() => Interlocked.Decrement(ref _current);

    [Conditional("DEBUG")]
    private void AssertInvariants() => Debug.Assert(_current >= 0 && _current <= _peak, "in flight must stay within [0, peak]");

    /// <summary>The span of one item's work; a struct so an async state machine holds it without allocating.</summary>
    public readonly struct Scope(InFlightProbe probe) : IDisposable
    {
        /// <summary>Marks the item's work as finished.</summary>
        public void Dispose() => probe.Exit();
    }
}
