using System.Threading.RateLimiting;

namespace FanOut.Coyote.Tests.Infrastructure;

/// <summary>
/// A rate limiter whose answers the schedule decides: <see cref="AttemptAcquireCore"/> grants or refuses, and a queued
/// <see cref="AcquireAsyncCore"/> is granted after some scheduling points, after <see cref="Gate"/> completes when there is
/// one. When <see cref="DisposePercent"/> says so at a call, the limiter is disposed from then on (as at shutdown): every later
/// call throws <see cref="ObjectDisposedException"/>, as Microsoft's limiters do, from <c>AttemptAcquire</c> and from
/// <c>AcquireAsync</c> (at once or from its task).
/// </summary>
/// <remarks>Counts the callers queued at once: the protocol promises they never outnumber the limit.</remarks>
public sealed class ScheduledRateLimiter(Schedule schedule) : RateLimiter
{
    private int _queued;
    private int _maxQueued;
    private bool _disposed;

    /// <summary>Percent of attempts granted at once.</summary>
    public int GrantPercent { get; init; } = 30;

    /// <summary>Percent of calls at which the limiter is disposed, after which every call throws <see cref="ObjectDisposedException"/>.</summary>
    public int DisposePercent { get; init; }

    /// <summary>True once the schedule disposed the limiter.</summary>
    public bool Disposed => Volatile.Read(ref _disposed);

    /// <summary>When set, a queued acquisition (and every attempt) waits for it: leases that come only once other work has run.</summary>
    public Task? Gate { get; set; }

    /// <summary>Called with the number queued each time one more queues.</summary>
    public Action<int>? OnQueued { get; init; }

    public int MaxQueued => Volatile.Read(ref _maxQueued);

    public int Queued => Volatile.Read(ref _queued);

    public override TimeSpan? IdleDuration => null;

    public override RateLimiterStatistics? GetStatistics() => new() { CurrentQueuedCount = Queued };

    protected override RateLimitLease AttemptAcquireCore(int permitCount)
    {
        ThrowIfDisposed();
        return (Gate is null || Gate.IsCompleted) && schedule.Chance(GrantPercent) ? Lease.Granted : Lease.Refused;
    }

    protected override ValueTask<RateLimitLease> AcquireAsyncCore(int permitCount, CancellationToken cancellationToken)
    {
        if (schedule.Chance(50))
        {
            ThrowIfDisposed(); // as TokenBucketRateLimiter: before anything is queued
        }

        return QueueAsync(cancellationToken);
    }

    private void ThrowIfDisposed()
    {
        if (DisposePercent > 0 && schedule.Chance(DisposePercent))
        {
            Volatile.Write(ref _disposed, true);
        }

        ObjectDisposedException.ThrowIf(Disposed, this);
    }

    private async ValueTask<RateLimitLease> QueueAsync(CancellationToken cancellationToken)
    {
        var queued = Interlocked.Increment(ref _queued);
        var seen = Volatile.Read(ref _maxQueued);
        while (queued > seen && Interlocked.CompareExchange(ref _maxQueued, queued, seen) != seen)
        {
            seen = Volatile.Read(ref _maxQueued);
        }

        OnQueued?.Invoke(queued);
        try
        {
            await schedule.PointAsync();
            if (Gate is { } gate)
            {
                await gate.WaitAsync(cancellationToken);
            }

            for (var i = schedule.Next(3); i > 0; i--)
            {
                cancellationToken.ThrowIfCancellationRequested();
                await schedule.PointAsync();
            }

            cancellationToken.ThrowIfCancellationRequested();
            ThrowIfDisposed();
            return Lease.Granted;
        }
        finally
        {
            Interlocked.Decrement(ref _queued);
        }
    }

    private sealed class Lease(bool acquired) : RateLimitLease
    {
        public static readonly Lease Granted = new(true);
        public static readonly Lease Refused = new(false);

        public override bool IsAcquired => acquired;

        public override IEnumerable<string> MetadataNames => [];

        public override bool TryGetMetadata(string metadataName, out object? metadata)
        {
            metadata = null;
            return false;
        }
    }
}
