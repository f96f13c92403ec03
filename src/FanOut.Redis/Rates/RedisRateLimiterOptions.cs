namespace FanOut.Redis;

/// <summary>
/// The settings of a <see cref="RedisRateLimiter"/>: <see cref="PermitLimit"/> permits per <see cref="Window"/> across every
/// process that uses the same <see cref="Key"/>, with bursts of up to <see cref="Burst"/>.
/// </summary>
public sealed record RedisRateLimiterOptions
{
    /// <summary>The name of the shared rate; the Redis key is <c>fanout:{Key}:rate</c>.</summary>
    /// <value>Required; not empty.</value>
    public required string Key { get; init; }

    /// <summary>Permits the whole fleet may take per <see cref="Window"/>, spread evenly (one every window / permit limit).</summary>
    /// <value>Required; 1 to 1,000,000.</value>
    public int PermitLimit { get; init; }

    /// <summary>The period <see cref="PermitLimit"/> is counted over.</summary>
    /// <value>Default 1 s; 1 ms to 1 h.</value>
    public TimeSpan Window { get; init; } = TimeSpan.FromSeconds(1);

    /// <summary>Permits that may be taken at once after a quiet spell (the bucket's capacity).</summary>
    /// <value>Default 0: <see cref="PermitLimit"/>; else 1 to <see cref="PermitLimit"/>. One spreads every permit evenly.</value>
    public int Burst { get; init; }

    /// <summary>How far ahead an acquisition may book its permits when the fleet is ahead of its rate (it then waits for them); beyond it, it asks again later.</summary>
    /// <value>Default 1 s; zero (never book ahead: ask again when the permit would be free) to 1 h. A booking given up on (canceled) is spent.</value>
    public TimeSpan ReservationHorizon { get; init; } = TimeSpan.FromSeconds(1);

    /// <summary>How long one round trip to Redis may take before the acquisition counts as Redis unavailable.</summary>
    /// <value>Default 1 s; 10 ms to 1 min.</value>
    public TimeSpan RedisTimeout { get; init; } = TimeSpan.FromSeconds(1);

    /// <summary>What an acquisition does when Redis cannot be reached: throw, or take its permits from a local rate.</summary>
    /// <value>Default <see cref="RedisUnavailablePolicy.Fail"/>.</value>
    public RedisUnavailablePolicy WhenUnavailable { get; init; } = RedisUnavailablePolicy.Fail;

    /// <summary>The most permits per <see cref="Window"/> this process takes while Redis is unreachable, under <see cref="RedisUnavailablePolicy.FallBackToLocal"/>.</summary>
    /// <value>
    /// Default 0 (required with that policy); 1 to <see cref="PermitLimit"/> then. With <see cref="FallbackAtLastShare"/> (the
    /// default) the ceiling of the share this process last had; without it, the local rate itself.
    /// </value>
    public int FallbackPermitLimit { get; init; }

    /// <summary>
    /// Under <see cref="RedisUnavailablePolicy.FallBackToLocal"/>, whether the local rate is this process's share of
    /// <see cref="PermitLimit"/> when Redis last answered (divided by the processes that used the rate then, rounded up), at
    /// most <see cref="FallbackPermitLimit"/>: N processes then take about the fleet rate during an outage, not N times it.
    /// </summary>
    /// <value>Default <see langword="true"/>. A process that never reached Redis uses <see cref="FallbackPermitLimit"/>.</value>
    public bool FallbackAtLastShare { get; init; } = true;

    /// <summary>The clock of the waits between attempts (the rate itself is always the Redis server's clock).</summary>
    /// <value>Default <see cref="TimeProvider.System"/>.</value>
    public TimeProvider TimeProvider { get; init; } = TimeProvider.System;

    /// <summary>The burst in effect: <see cref="Burst"/>, or <see cref="PermitLimit"/> when unset.</summary>
    internal int EffectiveBurst => Burst == 0 ? PermitLimit : Burst;

    /// <summary>Throws <see cref="ArgumentException"/> or <see cref="ArgumentOutOfRangeException"/> naming the first option out of its range.</summary>
    internal void Validate()
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(Key, nameof(Key));
        ArgumentOutOfRangeException.ThrowIfLessThan(PermitLimit, 1, nameof(PermitLimit));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(PermitLimit, 1_000_000, nameof(PermitLimit));
        ArgumentOutOfRangeException.ThrowIfLessThan(Window, TimeSpan.FromMilliseconds(1), nameof(Window));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(Window, TimeSpan.FromHours(1), nameof(Window));
        ArgumentOutOfRangeException.ThrowIfNegative(Burst, nameof(Burst));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(Burst, PermitLimit, nameof(Burst));
        ArgumentOutOfRangeException.ThrowIfLessThan(ReservationHorizon, TimeSpan.Zero, nameof(ReservationHorizon));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(ReservationHorizon, TimeSpan.FromHours(1), nameof(ReservationHorizon));
        ArgumentOutOfRangeException.ThrowIfLessThan(RedisTimeout, TimeSpan.FromMilliseconds(10), nameof(RedisTimeout));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(RedisTimeout, TimeSpan.FromMinutes(1), nameof(RedisTimeout));
        if (!Enum.IsDefined(WhenUnavailable))
        {
            throw new ArgumentOutOfRangeException(nameof(WhenUnavailable), WhenUnavailable, $"'{WhenUnavailable}' is not a policy: choose {string.Join(" or ", Enum.GetNames<RedisUnavailablePolicy>())}.");
        }

        if (WhenUnavailable == RedisUnavailablePolicy.FallBackToLocal)
        {
            ArgumentOutOfRangeException.ThrowIfLessThan(FallbackPermitLimit, 1, nameof(FallbackPermitLimit));
            ArgumentOutOfRangeException.ThrowIfGreaterThan(FallbackPermitLimit, PermitLimit, nameof(FallbackPermitLimit));
        }
        else
        {
            ArgumentOutOfRangeException.ThrowIfNegative(FallbackPermitLimit, nameof(FallbackPermitLimit));
        }

        ArgumentNullException.ThrowIfNull(TimeProvider, nameof(TimeProvider));
    }
}
