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
}
