namespace FanOut.Execution;

/// <summary>
/// The fan-out call whose workers run the calling code, as that code sees it through the async flow: its limit, whether
/// it holds a permit of that limit right now, and whether it re-runs an overloaded item itself. Nested use of the same limit
/// (an <c>AsRateLimiter()</c> lease, FanOut.Http's handler, an inner fan-out call) reuses the call's permit instead of
/// waiting for a second one, and an inner layer leaves re-runs to the call when the call makes them.
/// </summary>
/// <remarks>
/// <para>
/// Set once per call, in the ExecutionContext its workers capture (the caller's own context is left as it was), so it costs
/// nothing per worker or per item: an <see cref="AsyncLocal{T}"/> written per worker cost an ExecutionContext per worker
/// (86 B; 1.30x Parallel.ForEachAsync's bytes per call at 1,024 in flight, where the target is 1.2x).
/// </para>
/// <para>
/// Lending is shared: every nested acquisition of the call's limit while the call holds a permit of it reuses that permit,
/// so a body never waits for a permit of the limit its own item holds (waiting could deadlock once the items hold every
/// permit). The limit bounds items in flight; what one item's body does under its permit is that body's own concurrency.
/// Code of the call's flow that runs while the call holds no permit (a task a body did not await, outliving every item)
/// takes a permit of its own.
/// </para>
/// </remarks>
internal sealed class CallScope(ConcurrencyLimit limit, CallPermits permits, int overloadRetries)
{
    private static readonly AsyncLocal<CallScope?> s_current = new();

    /// <summary>Nested acquisitions holding one of the call's permits right now.</summary>
    private int _lends;

    /// <summary>The call's limit.</summary>
    internal ConcurrencyLimit Limit => limit;

    /// <summary>The call's <see cref="FanOutOptions.OverloadRetries"/>.</summary>
    internal int OverloadRetries => overloadRetries;

    /// <summary>The call whose workers run the calling code, if any.</summary>
    internal static CallScope? Current => s_current.Value;

    /// <summary>Nested acquisitions holding one of the call's permits right now (for tests).</summary>
    internal int Lends => Volatile.Read(ref _lends);

    /// <summary>Captures the ExecutionContext the call's workers run in, with this scope current in it and only there.</summary>
    internal ExecutionContext? CaptureWorkerContext()
    {
        var callers = s_current.Value;
        s_current.Value = this;
        try
        {
            return ExecutionContext.Capture();
        }
        finally
        {
            s_current.Value = callers;
        }
    }

    /// <summary>Reuses a permit of the call for a nested acquisition of <paramref name="nested"/>; false when the call holds none of that limit.</summary>
    internal bool TryLend(ConcurrencyLimit nested)
    {
        if (!ReferenceEquals(limit, nested) || !permits.HoldsAny)
        {
            return false;
        }

        Interlocked.Increment(ref _lends);
        return true;
    }

    /// <summary>Ends one nested reuse (the permit stays the call's).</summary>
    internal void Return() => Interlocked.Decrement(ref _lends);

    /// <summary>True when the call runs an item again after <paramref name="failure"/> (its limit judges it an overload, and it re-runs at all).</summary>
    internal bool WillRerun(Exception failure)
    {
        if (overloadRetries == 0)
        {
            return false;
        }

        try
        {
            return limit.IsOverload(failure);
        }
        catch (Exception)
        {
            return false; // the user's overload test threw: the call would not re-run on it either
        }
    }
}
