using FanOut.AspNetCore;

namespace Microsoft.AspNetCore.RateLimiting;

/// <summary>Plugs FanOut's adaptive, priority-aware admission (<see cref="FanOutConcurrencyLimiter"/>) into ASP.NET Core's rate limiting (<c>AddRateLimiter</c>, <c>UseRateLimiter</c>).</summary>
public static class FanOutConcurrencyRateLimiterOptionsExtensions
{
    /// <summary>
    /// Adds a policy named <paramref name="policyName"/> that admits requests to the <see cref="FanOutConcurrencyLimiter"/>
    /// registered by <c>services.AddFanOutConcurrency()</c>: <c>[EnableRateLimiting("FanOutConcurrency")]</c> or
    /// <c>.RequireRateLimiting("FanOutConcurrency")</c>. Every endpoint under it shares the one limit and queue; a refusal is
    /// answered with <see cref="FanOutConcurrencyOptions.RejectionStatusCode"/> and Retry-After.
    /// </summary>
    /// <param name="options">The rate limiter's options.</param>
    /// <param name="policyName">The policy's name; default <see cref="FanOutConcurrencyLimiter.PolicyName"/>.</param>
    /// <returns><paramref name="options"/>.</returns>
    public static RateLimiterOptions AddFanOutConcurrencyPolicy(this RateLimiterOptions options, string policyName = FanOutConcurrencyLimiter.PolicyName)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentException.ThrowIfNullOrEmpty(policyName);
        return options.AddPolicy<RequestPriority, FanOutConcurrencyPolicy>(policyName);
    }

    /// <summary>
    /// Sets <see cref="RateLimiterOptions.GlobalLimiter"/> to the <see cref="FanOutConcurrencyLimiter"/> registered by
    /// <c>services.AddFanOutConcurrency()</c>, so every request is admitted by it; unless <see cref="RateLimiterOptions.OnRejected"/>
    /// is set already, a refusal is answered with <see cref="FanOutConcurrencyOptions.RejectionStatusCode"/> and Retry-After.
    /// </summary>
    /// <param name="options">The rate limiter's options.</param>
    /// <returns><paramref name="options"/>.</returns>
    public static RateLimiterOptions UseFanOutConcurrencyAsGlobalLimiter(this RateLimiterOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.GlobalLimiter = new FanOutGlobalLimiter();
        options.OnRejected ??= FanOutConcurrencyLimiter.OnRejectedAsync;
        return options;
    }
}
