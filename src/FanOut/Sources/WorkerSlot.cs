namespace FanOut.Sources;

/// <summary>A worker's claimed item: written by <see cref="ItemSource{T}.TryClaimAsync"/>, which may complete asynchronously.</summary>
internal sealed class WorkerSlot<T>
{
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

    /// <summary>
    /// The indices this worker reserved and has not started (indexed sources): next in the high 32 bits, end (exclusive) in
    /// the low 32. The owner takes from the front and idle workers steal from the back, both with a compare-and-swap, so an
    /// item reserved behind a body that blocks is run by another worker instead of waiting for it.
    /// </summary>
    public long Range;

    /// <summary>
    /// Size of the next run of indices to reserve: doubles after each body that completed synchronously, back to 1 after
    /// one that went asynchronous.
    /// </summary>
    public int ChunkSize = 1;
}
