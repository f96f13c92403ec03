using FanOut.Execution;

namespace FanOut.Sources;

/// <summary>
/// One worker's state: its claimed item (written by <see cref="ItemSource{T}.TryClaimAsync"/>, which may complete
/// asynchronously), the lease and window slot it holds, and the thread-pool work item that starts it. What it holds of the
/// permit protocol is <see cref="PermitHolder.Hold"/>, which only <see cref="CallPermits"/> writes.
/// </summary>
internal sealed class WorkerSlot<T>(FanOutRun<T> owner) : PermitHolder, IThreadPoolWorkItem
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

    /// <summary>True while the worker holds a slot of an ordered stream's window for the item it is about to claim.</summary>
    public bool InWindow;

    /// <summary>Starts the worker on the pool thread that dequeued it.</summary>
    public void Execute() => Owner.RunWorker(this);
}
