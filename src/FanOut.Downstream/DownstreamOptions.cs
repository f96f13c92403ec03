using System.Net;

using FanOut.Downstream.Hosting;
using FanOut.Downstream.Latency;

namespace FanOut.Downstream;

/// <summary>How a <see cref="DownstreamServer"/> behaves: where it listens, how much it serves at once, how slow it is, when it crashes.</summary>
/// <remarks>
/// Admission order for <c>/item</c> and <c>/price</c>: crash check, then the token bucket
/// (<see cref="RatePerSecond"/>), then a capacity slot (<see cref="Capacity"/>) or a queue place
/// (<see cref="Queue"/>); a request that gets neither is answered 429 at once.
/// <see cref="Validate"/> runs in <see cref="DownstreamServer.StartAsync"/> before anything starts.
/// </remarks>
public sealed record DownstreamOptions
{
    /// <summary>The largest <see cref="Capacity"/>.</summary>
    public const int MaxCapacity = 10_000;

    /// <summary>The largest <see cref="Queue"/>.</summary>
    public const int MaxQueue = 100_000;

    /// <summary>The smallest <see cref="RatePerSecond"/>: one token per 100 s.</summary>
    public const double MinRatePerSecond = 0.01;

    /// <summary>The largest <see cref="RatePerSecond"/>.</summary>
    public const double MaxRatePerSecond = 1_000_000;

    /// <summary>The largest <see cref="RateBurst"/>.</summary>
    public const int MaxRateBurst = 1_000_000;

    /// <summary>The address to listen on; only loopback is allowed.</summary>
    /// <value>Default <see cref="IPAddress.Loopback"/> (127.0.0.1). Must be in 127.0.0.0/8 or be ::1; anything else (0.0.0.0, a LAN address) makes <see cref="Validate"/> throw.</value>
    public IPAddress Address { get; init; } = IPAddress.Loopback;

    /// <summary>The TCP port to listen on.</summary>
    /// <value>Default 0: the OS picks a free port, read it from <see cref="DownstreamServer.BaseAddress"/>. Range [0, 65535].</value>
    public int Port { get; init; }

    /// <summary>N: at most this many requests are served (hold a slot and do their simulated work) at once.</summary>
    /// <value>Default 16. Range [1, 10000].</value>
    public int Capacity { get; init; } = 16;

    /// <summary>Q: up to this many more requests wait, oldest first, for a slot; the next one is answered 429 at once.</summary>
    /// <value>Default 64. Range [0, 100000]; 0 means no queue (429 as soon as all slots are taken).</value>
    public int Queue { get; init; } = 64;

    /// <summary>R: a token-bucket rate limit, in requests per second; an empty bucket answers 429 with <c>Retry-After</c>.</summary>
    /// <value>Default null: no rate limit. Range [0.01, 1000000].</value>
    public double? RatePerSecond { get; init; }

    /// <summary>The token bucket's size: how many requests may pass at once after an idle spell.</summary>
    /// <value>Default null: max(1, ceil(R / 10)), a tenth of a second's worth. Range [1, 1000000]; only meaningful with <see cref="RatePerSecond"/>.</value>
    public int? RateBurst { get; init; }

    /// <summary>The simulated service time of each request (waited while holding a slot).</summary>
    /// <value>Default <c>fixed:20</c>. Parse a SPEC with <see cref="LatencySpec.Parse"/>.</value>
    public LatencySpec Latency { get; init; } = new FixedLatency(20);

    /// <summary>The seed of the latency sampler; the same seed gives the same sequence of latencies.</summary>
    /// <value>Default 1. Any value.</value>
    public int Seed { get; init; } = 1;

    /// <summary>K: the server serves K work requests; the (K+1)-th arrival crashes it.</summary>
    /// <value>Default null: never crash. Range [0, long.MaxValue]; 0 crashes on the first request.</value>
    /// <remarks>
    /// A crash aborts every open connection (including requests among the first K still in progress)
    /// and closes the listener, so clients see <see cref="HttpRequestException"/> (connection reset or
    /// refused) rather than a hang. Only <c>/item</c> and <c>/price</c> requests count.
    /// </remarks>
    public long? CrashAfterRequests { get; init; }

    /// <summary>The clock a Retry-After storm (<see cref="Control.DownstreamChange.RetryAfterStorm"/>) is timed by.</summary>
    /// <value>Default <see cref="TimeProvider.System"/>; tests pass a fake one.</value>
    public TimeProvider TimeProvider { get; init; } = TimeProvider.System;

    /// <summary>Checks every option.</summary>
    /// <exception cref="ArgumentNullException"><see cref="Address"/> or <see cref="Latency"/> is null.</exception>
    /// <exception cref="ArgumentException"><see cref="Address"/> is not loopback.</exception>
    /// <exception cref="ArgumentOutOfRangeException">A number is outside its documented range; the message names the value and the range.</exception>
    public void Validate()
    {
        ArgumentNullException.ThrowIfNull(Address, nameof(Address));
        ArgumentNullException.ThrowIfNull(Latency, nameof(Latency));
        ArgumentNullException.ThrowIfNull(TimeProvider, nameof(TimeProvider));
        LoopbackGuard.ThrowIfNotLoopback(Address, nameof(Address));
        ThrowIfOutside(Port, 0, 65535, nameof(Port));
        ThrowIfOutside(Capacity, 1, MaxCapacity, nameof(Capacity));
        ThrowIfOutside(Queue, 0, MaxQueue, nameof(Queue));
        if (RatePerSecond is { } rate && !(rate >= MinRatePerSecond && rate <= MaxRatePerSecond))
        {
            // Written as !(in range) so NaN fails too.
            throw new ArgumentOutOfRangeException(
                nameof(RatePerSecond), rate, $"RatePerSecond must be in [{MinRatePerSecond}, {MaxRatePerSecond}] requests/s, or null for no limit; got {rate}.");
        }

        if (RateBurst is { } burst)
        {
            ThrowIfOutside(burst, 1, MaxRateBurst, nameof(RateBurst));
        }

        if (CrashAfterRequests is < 0)
        {
            throw new ArgumentOutOfRangeException(
                nameof(CrashAfterRequests), CrashAfterRequests, $"CrashAfterRequests must be at least 0, or null for never; got {CrashAfterRequests}.");
        }
    }

    /// <summary>The token bucket size in effect: <see cref="RateBurst"/>, or a tenth of a second's worth of <see cref="RatePerSecond"/>.</summary>
    internal int EffectiveRateBurst
        => RateBurst ?? (int)Math.Max(1, Math.Ceiling((RatePerSecond ?? 0) / 10));

    private static void ThrowIfOutside(long value, long min, long max, string name)
    {
        if (value < min || value > max)
        {
            throw new ArgumentOutOfRangeException(name, value, $"{name} must be in [{min}, {max}]; got {value}.");
        }
    }
}
