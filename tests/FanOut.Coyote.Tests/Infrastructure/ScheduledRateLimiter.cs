using System.Threading.RateLimiting;

namespace FanOut.Coyote.Tests.Infrastructure;

/// <summary>
/// A rate limiter whose answers the schedule decides: <see cref="AttemptAcquireCore"/> grants or refuses, and a queued
/// <see cref="AcquireAsyncCore"/> is granted after some scheduling points, after <see cref="Gate"/> completes when there is
/// one, or throws <see cref="ObjectDisposedException"/> (a limiter disposed at shutdown) when <see cref="ThrowPercent"/> says so.
/// </summary>
/// <remarks>Counts the callers queued at once: the protocol promises they never outnumber the limit.</remarks>
public sealed class ScheduledRateLimiter(Schedule schedule) : RateLimiter
{
    private int _queued;
    private int _maxQueued;

    /// <summary>Percent of attempts granted at once.</summary>
    public int GrantPercent { get; init; } = 30;

    /// <summary>Percent of queued acquisitions that throw <see cref="ObjectDisposedException"/>.</summary>
    public int ThrowPercent { get; init; }

    /// <summary>When set, a queued acquisition (and every attempt) waits for it: leases that come only once other work has run.</summary>
    public Task? Gate { get; set; }

    /// <summary>Called with the number queued each time one more queues.</summary>
    public Action<int>? OnQueued { get; init; }

    public int MaxQueued => Volatile.Read(ref _maxQueued);

    public int Queued => Volatile.Read(ref _queued);

    public override TimeSpan? IdleDuration => null;

    public override RateLimiterStatistics? GetStatistics() => new() { CurrentQueuedCount = Queued };

    protected override RateLimitLease AttemptAcquireCore(int permitCount) =>
        (Gate is null || Gate.IsCompleted) && schedule.Chance(GrantPercent) ? Lease.Granted : Lease.Refused;

    protected override async ValueTask<RateLimitLease> AcquireAsyncCore(int permitCount, CancellationToken cancellationToken)
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
            if (ThrowPercent > 0 && schedule.Chance(ThrowPercent))
            {
                throw new ObjectDisposedException(nameof(ScheduledRateLimiter));
            }

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
