using System.Diagnostics;

namespace FanOut.Downstream.Hosting;

/// <summary>The "crash after K requests" switch: counts work-request arrivals and trips once.</summary>
/// <remarks>
/// Tripping sets a flag first (so every later arrival aborts its connection, closing the window
/// before the listener is down), then cancels <see cref="Token"/> (so requests sleeping in a slot or
/// waiting in the queue abort theirs), then tells the server to close the listener.
/// </remarks>
internal sealed class CrashSwitch : IDisposable
{
    private readonly long _crashAfter;
    private readonly Action _onTripped;
    private readonly CancellationTokenSource _cts = new();
    private long _arrivals;
    private int _tripped;

    /// <param name="crashAfter">K, or null for never.</param>
    /// <param name="onTripped">Runs once, on the tripping thread, after the flag is set and in-flight work is cancelled.</param>
    public CrashSwitch(long? crashAfter, Action onTripped)
    {
        _crashAfter = crashAfter ?? long.MaxValue;
        _onTripped = onTripped;
    }

    /// <summary>Cancelled when the switch trips: in-flight and queued requests watch it.</summary>
    public CancellationToken Token => _cts.Token;

    /// <summary>True once the server has crashed.</summary>
    public bool HasTripped => Volatile.Read(ref _tripped) != 0;

    /// <summary>Counts one work-request arrival; true when the server has crashed (this arrival or an earlier one tripped it) and the request must abort.</summary>
    public bool CountArrival()
    {
        if (HasTripped)
        {
            return true;
        }

        if (Interlocked.Increment(ref _arrivals) <= _crashAfter)
        {
            return false;
        }

        Trip();
        return true;
    }

    /// <summary>Crashes the server now; later calls do nothing.</summary>
    public void Trip()
    {
        if (Interlocked.Exchange(ref _tripped, 1) != 0)
        {
            return;
        }

        Debug.Assert(HasTripped, "The flag is set before anything is cancelled.");
        try
        {
            _cts.Cancel();
        }
        catch (ObjectDisposedException)
        {
            // The server was disposed concurrently; nothing is left to abort.
        }

        _onTripped();
    }

    public void Dispose() => _cts.Dispose();
}
