namespace FanOut.Execution;

/// <summary>How long an overloaded item waits before it runs again when the downstream gave no hint.</summary>
/// <remarks>
/// Exponential with full jitter (after the AWS architecture blog's "Exponential Backoff and Jitter"): attempt k waits a random
/// time up to <c>min(MaxDelay, BaseDelay x 2^k)</c>, so retries of items rejected together spread out instead of arriving
/// together again. The concurrency limit has already backed off; the delay only keeps a rejecting downstream (a rate
/// limiter answering 429 fast) from being asked again at once.
/// </remarks>
internal static class OverloadBackoff
{
    /// <summary>The first attempt's ceiling: one token of a 200/s bucket.</summary>
    public static readonly TimeSpan BaseDelay = TimeSpan.FromMilliseconds(5);

    /// <summary>No wait between attempts is longer than this.</summary>
    public static readonly TimeSpan MaxDelay = TimeSpan.FromSeconds(1);

    /// <summary>A retry-after hint longer than this fails the item instead: a fan-out should not sit idle for minutes.</summary>
    public static readonly TimeSpan MaxHonouredRetryAfter = TimeSpan.FromMinutes(1);

    /// <summary>The pause before asking a rate limiter again after it refused a lease without saying when.</summary>
    public static readonly TimeSpan LeaseRetryDelay = TimeSpan.FromMilliseconds(1);

    public static TimeSpan Delay(int attempt)
    {
        var ceiling = Math.Min(MaxDelay.TotalMilliseconds, BaseDelay.TotalMilliseconds * Math.Pow(2, attempt - 1));
        return TimeSpan.FromMilliseconds(Random.Shared.NextDouble() * ceiling);
    }
}
