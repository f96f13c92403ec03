using FanOut.Execution;

namespace FanOut.Sources;

/// <summary>
/// One worker's state: its claimed item (written by <see cref="ItemSource{T}.TryClaimAsync"/>, which may complete
/// asynchronously) and the thread-pool work item that starts it.
/// </summary>
internal sealed class WorkerSlot<T>(FanOutRun<T> owner) : IThreadPoolWorkItem
{
    /// <summary>The call this worker belongs to.</summary>
    public readonly FanOutRun<T> Owner = owner;

    public T Item = default!;

    /// <summary>The item's position in the source; 64-bit, so an endless source never wraps.</summary>
    public long Index;

    /// <summary>How many times the current item was run again after an overload.</summary>
    public int Attempt;

    /// <summary>How long to wait before the current item runs again.</summary>
    public TimeSpan RetryDelay;

    /// <summary>The rate limiter's lease for the current attempt, held while its body runs.</summary>
    public System.Threading.RateLimiting.RateLimitLease? Lease;

    /// <summary>Per-worker state of the run's subclass (a stream's result holder).</summary>
    public object? State;

    /// <summary>Set when the worker counted itself out of the call's active workers as it retired (see FanOutRun's TryRetire).</summary>
    public bool Retired;

    /// <summary>True while the worker holds a permit of the limit's pool: the worker's finally gives it back.</summary>
    public bool HoldsPermit;

    /// <summary>True while the worker holds the permit its call borrowed from an enclosing item (never the pool's to give).</summary>
    public bool HoldsBorrowed;

    /// <summary>True while the worker is counted among the call's workers on their way to a permit (<see cref="CallPermits.Seeking"/>).</summary>
    public bool Seeking;

    /// <summary>True while the worker holds a slot of an ordered stream's window for the item it is about to claim.</summary>
    public bool InWindow;

    /// <summary>True when the worker holds a permit, its own or borrowed: a body may start.</summary>
    public bool HoldsAnyPermit => HoldsPermit || HoldsBorrowed;

    /// <summary>Starts the worker on the pool thread that dequeued it.</summary>
    public void Execute() => Owner.RunWorker(this);
}
