using System.Threading.RateLimiting;

using FanOut.Limits.Contract;

namespace FanOut.Tests.Limits.Contract;

/// <summary>Issue 37: every built-in limit seen as a <see cref="RateLimiter"/> (<c>AsRateLimiter()</c>) keeps the runtime's contract.</summary>
public sealed class FixedRateLimiterContractTests : ConcurrencyRateLimiterContract
{
    protected override RateLimiter Create(int capacity) => ConcurrencyLimit.Fixed(capacity).AsRateLimiter();
}

/// <summary>A settable limit's <c>AsRateLimiter()</c> against the runtime's contract.</summary>
public sealed class SettableRateLimiterContractTests : ConcurrencyRateLimiterContract
{
    protected override RateLimiter Create(int capacity) => ConcurrencyLimit.Settable(capacity).AsRateLimiter();
}

/// <summary>An adaptive limit held at one level (MinLimit = MaxLimit) seen through <c>AsRateLimiter()</c>, against the runtime's contract.</summary>
public sealed class AdaptiveRateLimiterContractTests : ConcurrencyRateLimiterContract
{
    protected override RateLimiter Create(int capacity) =>
        ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { MinLimit = capacity, MaxLimit = capacity, InitialLimit = capacity }).AsRateLimiter();
}
