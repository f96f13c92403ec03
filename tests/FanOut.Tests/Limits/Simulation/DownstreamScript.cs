namespace FanOut.Tests.Limits.Simulation;

/// <summary>How a scripted downstream's service time varies from one request to the next.</summary>
public enum LatencyShape
{
    /// <summary>The median +-10% (uniform): a steady downstream.</summary>
    Steady,

    /// <summary>Lognormal around the median with p99 = 10x the median: a heavy tail with no overload behind it.</summary>
    HeavyTail,

    /// <summary>Exactly the median: <c>fanout serve --latency fixed:20</c>, whose answers to one round come back together.</summary>
    Fixed,

    /// <summary>Cache hits and misses: 90% of requests at the median +-10%, 10% sixteen times slower.</summary>
    Bimodal,
}

/// <summary>What a scripted downstream is like at one moment.</summary>
public sealed record DownstreamState
{
    /// <summary>Requests served at once.</summary>
    public int Capacity { get; init; } = 64;

    /// <summary>Requests that wait (FIFO) for a slot beyond <see cref="Capacity"/>; more are answered 429 at once. 0: a hard cap.</summary>
    public int Queue { get; init; }

    /// <summary>The median service time of a request that starts being served now.</summary>
    public TimeSpan Latency { get; init; } = TimeSpan.FromMilliseconds(20);

    /// <summary>How service times spread around <see cref="Latency"/>.</summary>
    public LatencyShape Shape { get; init; } = LatencyShape.Steady;

    /// <summary>While set, every request is answered 429 at once with this Retry-After (a storm); the client waits it out.</summary>
    public TimeSpan? RetryAfter { get; init; }

    /// <summary>
    /// Latency that rises smoothly with load: a request that starts being served with n requests in service (itself included)
    /// takes <see cref="Latency"/> x (1 + (n / k)^2), so throughput peaks at k in service, at twice the latency. 0: none.
    /// </summary>
    public int SmoothKnee { get; init; }

    /// <summary>
    /// Periodic stalls (a collection, a failover, a noisy neighbour): from <see cref="StallEvery"/> on, every <see cref="StallEvery"/>, the
    /// downstream makes no progress for <see cref="StallFor"/>, so a request in service then answers that much later.
    /// Zero: none. Capacity is unchanged: a stall is not overload.
    /// </summary>
    public TimeSpan StallEvery { get; init; }

    /// <summary>How long each stall lasts (see <see cref="StallEvery"/>).</summary>
    public TimeSpan StallFor { get; init; }

    /// <summary>
    /// A rate limit (a token bucket, as most public APIs have): requests admitted per second, beyond which a request is
    /// answered 429 at once, with no Retry-After, whatever the room in service. 0: none.
    /// </summary>
    public double RatePerSecond { get; init; }

    /// <summary>The Retry-After a request refused for want of room (or of a token) carries, as many APIs send with every 429; none by default.</summary>
    public TimeSpan? RefusalRetryAfter { get; init; }

    /// <summary>The token bucket's depth: requests admitted at once after a pause (see <see cref="RatePerSecond"/>).</summary>
    public int RateBurst { get; init; } = 1;
}

/// <summary>A downstream's state over time, from the start of a simulation: capacity, queue, latency and storms, scripted.</summary>
/// <param name="stateAt">The state at a time since the start.</param>
public sealed class DownstreamScript(Func<TimeSpan, DownstreamState> stateAt)
{
    /// <summary>The same state throughout.</summary>
    public static DownstreamScript Constant(DownstreamState state) => new(_ => state);

    /// <summary>Phases: each state holds from its start until the next one's.</summary>
    public static DownstreamScript Phases(params (TimeSpan From, DownstreamState State)[] phases) =>
        new(at => phases.Last(p => p.From <= at).State);

    /// <summary>The state at <paramref name="at"/> since the start.</summary>
    public DownstreamState At(TimeSpan at) => stateAt(at);
}
