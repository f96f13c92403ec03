using System.Diagnostics;
using System.Threading.RateLimiting;

using FanOut.Execution;

namespace FanOut.Limits.RateLimiting;

/// <summary>A <see cref="ConcurrencyLimit"/> seen as a <see cref="System.Threading.RateLimiting.RateLimiter"/>; see <see cref="ConcurrencyLimitRateLimiterExtensions.AsRateLimiter"/>.</summary>
/// <remarks>
/// Every lease, and every caller waiting for one, counts as a call running on the limit (<see cref="ConcurrencyLimit.EnterCall"/>
/// before it looks for a permit, <see cref="ConcurrencyLimit.LeaveCall"/> once the permit is back), so that a fan-out call
/// on the same limit sees it shared (<see cref="ConcurrencyLimit.IsShared"/>), as it sees another call: it gives permits
/// back between items and never holds one while its source is quiet. (That a call never ends with items unrun while others
/// hold every permit is the run's own rule, for any holder: its last worker waits instead of retiring.)
/// </remarks>
internal sealed class ConcurrencyLimitRateLimiter : RateLimiter
{
    private static readonly RateLimitLease s_failed = new EmptyLease(isAcquired: false);
    private static readonly RateLimitLease s_probe = new EmptyLease(isAcquired: true);

    private readonly ConcurrencyLimit _limit;

    /// <summary>The limit's <see cref="ConcurrencyLimit.LearnsFromWork"/>, read once (constant for an instance).</summary>
    private readonly bool _recordsSamples;

    /// <summary>Canceled by <see cref="Dispose(bool)"/>: ends this limiter's own waits, never the limit's other users'.</summary>
    private readonly CancellationTokenSource _disposed = new();

    private long _successfulLeases;
    private long _failedLeases;

    /// <summary>Callers of this limiter waiting for a permit right now.</summary>
    private long _queued;

    /// <summary>When a lease of this limiter was last given back (or the limiter made), in <see cref="ConcurrencyLimit.TimeProvider"/> ticks; see <see cref="IdleDuration"/>.</summary>
    private long _lastActivity;

    public ConcurrencyLimitRateLimiter(ConcurrencyLimit limit)
    {
        _limit = limit;
        _recordsSamples = limit.LearnsFromWork;
        _lastActivity = limit.TimeProvider.GetTimestamp();
    }

    /// <summary>
    /// How long every permit of the limit has been free, as far as this limiter saw: null while any permit is taken (by
    /// anyone) or anyone of this limiter waits; otherwise the time since a lease of this limiter was last given back (or
    /// since it was made). Permits other users of the limit took and gave back are not seen.
    /// </summary>
    public override TimeSpan? IdleDuration =>
        _limit.InFlight > 0 || Interlocked.Read(ref _queued) > 0
            ? null
            : _limit.TimeProvider.GetElapsedTime(Interlocked.Read(ref _lastActivity));

    public override RateLimiterStatistics? GetStatistics()
    {
        ObjectDisposedException.ThrowIf(_disposed.IsCancellationRequested, this);
        return new()
        {
            CurrentAvailablePermits = Math.Max(0, _limit.Current - _limit.InFlight),
            CurrentQueuedCount = Interlocked.Read(ref _queued),
            TotalSuccessfulLeases = Interlocked.Read(ref _successfulLeases),
            TotalFailedLeases = Interlocked.Read(ref _failedLeases),
        };
    }

    protected override RateLimitLease AttemptAcquireCore(int permitCount)
    {
        CheckPermitCount(permitCount);
        ObjectDisposedException.ThrowIf(_disposed.IsCancellationRequested, this);
        if (permitCount == 0)
        {
            // A probe, counted as the runtime's limiters count one: a success when a permit is free, else a failure.
            return _limit.InFlight < _limit.Current ? Counted(s_probe) : Counted(s_failed);
        }

        if (TryReuseItemPermit() is { } nested)
        {
            return nested;
        }

        _limit.EnterCall();
        if (_limit.TryAcquire())
        {
            return Granted();
        }

        _limit.LeaveCall();
        Interlocked.Increment(ref _failedLeases);
        return s_failed;
    }

    protected override ValueTask<RateLimitLease> AcquireAsyncCore(int permitCount, CancellationToken cancellationToken)
    {
        CheckPermitCount(permitCount);
        ObjectDisposedException.ThrowIf(_disposed.IsCancellationRequested, this);
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<RateLimitLease>(cancellationToken);
        }

        if (permitCount == 0 && _limit.InFlight < _limit.Current)
        {
            return new(Counted(s_probe));
        }

        if (permitCount == 1 && TryReuseItemPermit() is { } nested)
        {
            return new(nested);
        }

        // Counted as a user of the limit before it looks for a permit, until the lease gives it back (see the class remarks).
        _limit.EnterCall();

        // The fast path takes no lock and allocates only the lease; TryAcquire fails while others queue, so FIFO holds.
        if (permitCount == 1 && _limit.TryAcquire())
        {
            return new(Granted());
        }

        return WaitAsync(permitCount, cancellationToken);
    }

    private async ValueTask<RateLimitLease> WaitAsync(int permitCount, CancellationToken cancellationToken)
    {
        Interlocked.Increment(ref _queued);
        bool acquired;
        try
        {
            // Linked only on this slow path: the wait ends when the caller gives up or this limiter is disposed.
            using var linked = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, _disposed.Token);
            acquired = await _limit.WaitAsync(linked.Token).ConfigureAwait(false);
        }
        catch
        {
            _limit.LeaveCall();
            throw;
        }
        finally
        {
            Interlocked.Decrement(ref _queued);
        }

        if (!acquired)
        {
            _limit.LeaveCall();
            cancellationToken.ThrowIfCancellationRequested();
            Interlocked.Increment(ref _failedLeases); // disposed while waiting, as ConcurrencyLimiter fails its queue
            return s_failed;
        }

        if (permitCount == 0)
        {
            // A probe: a permit was free a moment ago. Pass it on (to the next waiter, if any).
            _limit.Release();
            _limit.LeaveCall();
            return Counted(s_probe);
        }

        return Granted();
    }

    /// <summary>Counts a lease that holds no permit (a probe's) in the statistics, and returns it.</summary>
    private RateLimitLease Counted(RateLimitLease lease)
    {
        Interlocked.Increment(ref lease.IsAcquired ? ref _successfulLeases : ref _failedLeases);
        return lease;
    }

    private ConcurrencyLease Granted()
    {
        Interlocked.Increment(ref _successfulLeases);
        return new ConcurrencyLease(this, _limit, _recordsSamples);
    }

    /// <summary>
    /// A lease on a permit of the FanOut call whose body asks (a loop on this limit whose bodies call through it: FanOut.Http's
    /// handler, a Polly pipeline): waiting for a second permit of a limit the caller already holds one of would deadlock once
    /// the items hold them all. Null outside such an item.
    /// </summary>
    private ConcurrencyLease? TryReuseItemPermit()
    {
        if (CallScope.Current is not { } item || !item.TryLend(_limit))
        {
            return null;
        }

        Interlocked.Increment(ref _successfulLeases);
        return new ConcurrencyLease(this, _limit, item);
    }

    /// <summary>Called by a lease once its permit went back: the start of a possible idle time.</summary>
    internal void OnLeaseReleased() => Volatile.Write(ref _lastActivity, _limit.TimeProvider.GetTimestamp());

    private static void CheckPermitCount(int permitCount)
    {
        // The base class has already refused negative counts.
        Debug.Assert(permitCount >= 0);
        if (permitCount > 1)
        {
            throw new ArgumentOutOfRangeException(nameof(permitCount), permitCount, "A FanOut limit's RateLimiter leases one permit at a time (1), or 0 to ask whether one is free.");
        }
    }

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            EndWaits();
        }

        base.Dispose(disposing);
    }

    /// <summary>
    /// The base class's <c>DisposeAsync</c> runs this, then <c>Dispose(false)</c>: without it an <c>await using</c> limiter left
    /// its waiters hanging and took new acquires.
    /// </summary>
    protected override ValueTask DisposeAsyncCore()
    {
        EndWaits();
        return default;
    }

    /// <summary>Ends this limiter's waits (each then returns a failed lease) and refuses new acquires; leases already taken stay valid until disposed.</summary>
    private void EndWaits()
    {
        if (!_disposed.IsCancellationRequested)
        {
            _disposed.Cancel();
        }
    }

    /// <summary>A lease that holds no permit: a failed attempt, or a probe (permit count 0) that found room.</summary>
    private sealed class EmptyLease(bool isAcquired) : RateLimitLease
    {
        public override bool IsAcquired => isAcquired;

        public override IEnumerable<string> MetadataNames => [];

        public override bool TryGetMetadata(string metadataName, out object? metadata)
        {
            metadata = null;
            return false;
        }

        protected override void Dispose(bool disposing)
        {
        }
    }
}
