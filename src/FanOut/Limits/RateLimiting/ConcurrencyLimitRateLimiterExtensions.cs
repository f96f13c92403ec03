using System.Threading.RateLimiting;

using FanOut.Limits.RateLimiting;

namespace FanOut;

/// <summary>Any <see cref="ConcurrencyLimit"/> as a standard <see cref="RateLimiter"/>, for Polly, Microsoft.Extensions.Http.Resilience and ASP.NET Core.</summary>
public static class ConcurrencyLimitRateLimiterExtensions
{
    /// <summary>
    /// A <see cref="RateLimiter"/> whose permits are <paramref name="limit"/>'s: its leases and the fan-out calls running on the
    /// same limit share one budget, and an adaptive limit learns from each lease's duration and outcome.
    /// </summary>
    /// <param name="limit">The budget to share.</param>
    /// <returns>
    /// A new limiter over <paramref name="limit"/> (cheap: every limiter made from one limit shares its permits). Its leases are
    /// <see cref="ConcurrencyLease"/>s: say how the work ended on one with <see cref="ConcurrencyLease.MarkOverloaded()"/> or
    /// <see cref="ConcurrencyLease.MarkFailed"/> before disposing it (the default is <see cref="ItemOutcome.Succeeded"/>).
    /// </returns>
    /// <remarks>
    /// <para>
    /// A lease holds one permit: <c>AttemptAcquire</c> and <c>AcquireAsync</c> take 1 (0 asks whether a permit is free,
    /// taking none; any other count throws <see cref="ArgumentOutOfRangeException"/>). <c>AcquireAsync</c> waits in the
    /// limit's FIFO queue, with the fan-out calls' workers, for as long as its token allows, and throws
    /// <see cref="OperationCanceledException"/> when the token is canceled first. Disposing the limiter fails the waits of
    /// its own callers with unacquired leases; the limit and its other users are unaffected.
    /// </para>
    /// <para>
    /// A lease's disposal gives the permit back exactly once, and first tells the limit how the work went
    /// (<see cref="ConcurrencyLimit.RecordStart"/> when the permit was taken, <see cref="ConcurrencyLimit.RecordCompletion(long, ItemOutcome)"/>
    /// with the lease's <see cref="ConcurrencyLease.Outcome"/>). Where a pipeline hides the lease (Polly's rate limiter
    /// strategy disposes it for you), every lease reads as a success: latency alone then drives an adaptive limit. For
    /// HttpClient, FanOut.Http's handler judges each response itself.
    /// </para>
    /// </remarks>
    /// <exception cref="ArgumentNullException"><paramref name="limit"/> is null.</exception>
    public static RateLimiter AsRateLimiter(this ConcurrencyLimit limit)
    {
        ArgumentNullException.ThrowIfNull(limit);
        return new ConcurrencyLimitRateLimiter(limit);
    }
}
