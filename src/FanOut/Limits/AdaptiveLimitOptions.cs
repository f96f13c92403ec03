using System.Net;

namespace FanOut;

/// <summary>Bounds and signals of an adaptive <see cref="ConcurrencyLimit"/> (see <see cref="ConcurrencyLimit.Adaptive"/>).</summary>
public sealed record AdaptiveLimitOptions
{
    /// <summary>The lowest the limit goes, however bad latency gets.</summary>
    /// <value>Default 1, range 1 to <see cref="MaxLimit"/>: a fan-out must keep making progress, and one at a time is the safest way to.</value>
    public int MinLimit { get; init; } = 1;

    /// <summary>The highest the limit goes, however flat latency stays.</summary>
    /// <value>
    /// Default 256, range <see cref="MinLimit"/> to <see cref="int.MaxValue"/>. Pure waiting (timers, a downstream with room to
    /// spare) never raises latency, so the limit climbs to this cap: it is the worst case of sockets, memory and
    /// downstream load one call may create. 256 is far above any core count and above common connection-pool sizes (SQL
    /// Server's default pool is 100), while still two orders of magnitude below the thousands of tasks an unbounded
    /// <c>Task.WhenAll</c> would start. Netflix's Gradient2 uses 200, Envoy's filter 1000.
    /// </value>
    public int MaxLimit { get; init; } = 256;

    /// <summary>The limit the first items run under: the most calls sent to a downstream nothing has been heard from yet.</summary>
    /// <value>
    /// Default 10 (TCP's initial window, RFC 6928; within <see cref="MinLimit"/> and <see cref="MaxLimit"/> when they exclude it), range <see cref="MinLimit"/> to <see cref="MaxLimit"/>. Before anything
    /// has answered, nothing raises the limit: from here each uncontended answer adds one permit (a doubling per round trip,
    /// as TCP's slow start grows per acknowledgement), so a downstream that takes fewer calls at once sees at most these
    /// before its first answer, then a burst bounded by the answers it gave. Slow start ends on a queue, a "no" or a first round
    /// proved cold; the latency without a queue is then measured below what the downstream was seen to carry. Pure waits,
    /// which a limit that learns from answers cannot tell from a cold HTTP server, pay the ramp: 100 <c>Task.Delay(100)</c>
    /// bodies take about 3.3x the time of Fixed(256), 500 <c>Task.Delay(20)</c> about 2.2x (docs/adaptive.md has the figures). Lower it (Envoy's
    /// adaptive concurrency pins 3 while it measures) for a downstream that must never see more than a few calls before it
    /// has answered; raise it for one you know is elastic: at 64, those 500 waits take about four round trips, and a
    /// downstream that takes fewer than 64 at once sees the rest of the first 64 rejected.
    /// </value>
    public int InitialLimit
    {
        get => _initialLimit ?? Math.Clamp(DefaultInitialLimit, MinLimit, Math.Max(MinLimit, MaxLimit));
        init => _initialLimit = value;
    }

    /// <summary>The <see cref="InitialLimit"/> when none is given: clamped into the range the options give (a <see cref="MaxLimit"/> of 8 starts at 8).</summary>
    private const int DefaultInitialLimit = 10;

    /// <summary>The <see cref="InitialLimit"/> given, if any.</summary>
    private readonly int? _initialLimit;

    /// <summary>How fast slow start may send the permits its answers earned: at most this many times the limit per baseline latency.</summary>
    /// <value>
    /// Default 4, range 1 and above (<see cref="double.PositiveInfinity"/>: unpaced). In slow start each answer adds a permit at
    /// once, so a round whose answers arrive together (a downstream of one fixed latency answers a round of 64 within a
    /// millisecond) would send its whole growth before the first "no" to it can come back. The pace grants that growth two
    /// permits at once, then one every baseline / (this x the limit), so the first rejection ends the ramp while most of it is
    /// unsent; cuts are never paced, and nothing is paced after slow start. At 1 slow start still doubles per round trip.
    /// Linux paces TCP's slow start at 2. 4 costs pure waits, whose answers come in rounds, a tenth of a round trip (100
    /// <c>Task.Delay(100)</c> bodies: 4.10 round trips against 4.00 unpaced), 1 about half of one. FanOut.Http's per-host
    /// limit paces at 1: each of its growth requests opens a connection, a burst of which takes 10-15 ms to open, and the
    /// "no" to it comes back that much later (docs/adaptive.md has the figures).
    /// </value>
    public double SlowStartPace { get; init; } = 4;

    /// <summary>How far above what the downstream has been seen to carry the limit goes: the room of its target.</summary>
    /// <value>
    /// Default 1.25, range 1 to 4. The law's target is the most answers per second times the latency without a queue (what
    /// the downstream carries at once), times this: a quarter of room keeps the limit from sitting under what the
    /// downstream carries when the rate reads low by chance or the tail is long, so a fan-out gets all of the throughput,
    /// at the cost of about a quarter of a queue at a downstream that queues, and it is what lets the limit find more room
    /// when the downstream grows. Below it the limit holds nearer what the downstream carries: a service admitting requests
    /// to an Npgsql pool of 4 at 4x load kept its admitted p99 at 1.9x the uncontended one at 1, against 2.5x at 1.25, and
    /// lost recovery, throughput at a smooth knee and a late joiner's share in the simulation (docs/server.md).
    /// </value>
    public double Headroom { get; init; } = 1.25;

    /// <summary>The factor the limit is multiplied by when a window saw an overload failure (see <see cref="IsOverload"/>).</summary>
    /// <value>
    /// Default 0.8, range above 0 and below 1. TCP halves, but a downstream that rejects beyond C would then idle
    /// between C/2 and C; 0.8 keeps the sawtooth between 0.8 C and C + 1 (Netflix's AIMD uses 0.9).
    /// </value>
    public double BackoffRatio { get; init; } = 0.8;

    /// <summary>Decides whether an item's exception means the downstream is overloaded.</summary>
    /// <value>
    /// Default <see langword="null"/>: <see cref="IsOverloadByDefault"/> (HTTP 429/503 and <see cref="OverloadedException"/>).
    /// An overload means the downstream did not process the item, so the item may run again (see
    /// <see cref="FanOutOptions.OverloadRetries"/>): return true only for answers that say so. A client-side timeout
    /// (<see cref="TimeoutException"/>, or HttpClient's canceled request whose inner exception is one) backs the limit off
    /// whatever this says, but fails the item unless this returns true for it. Called outside every lock, from worker threads.
    /// </value>
    public Func<Exception, bool>? IsOverload { get; init; }

    /// <summary>The name the limit's telemetry carries (its <see cref="Diagnostics.FanOutEvents.LimitChanged"/> events), so that a trace tells limits apart.</summary>
    /// <value>Default <see langword="null"/>: the limit's kind, <c>adaptive</c>. FanOut.Http names each host's limit after the host.</value>
    public string? Name { get; init; }

    /// <summary>The clock latency is measured with.</summary>
    /// <value>Default <see cref="TimeProvider.System"/>; tests pass a manual one to drive time themselves.</value>
    public TimeProvider TimeProvider { get; init; } = TimeProvider.System;

    /// <summary>
    /// The default overload test: an <see cref="OverloadedException"/>, or an <see cref="HttpRequestException"/> with status 429
    /// (Too Many Requests) or 503 (Service Unavailable): answers that say the downstream did not process the request. A timeout
    /// is not one (the request may have been done): it backs the limit off without running the item again.
    /// </summary>
    /// <param name="exception">The item's exception.</param>
    /// <returns>True if the exception means "too much load".</returns>
    public static bool IsOverloadByDefault(Exception exception) => exception switch
    {
        OverloadedException => true,
        HttpRequestException { StatusCode: HttpStatusCode.TooManyRequests or HttpStatusCode.ServiceUnavailable } => true,
        _ => false,
    };

    /// <summary>Rules of the law left out, for its ablation (<c>LawAblationTests</c>); none in use.</summary>
    internal Limits.Adaptive.BandwidthDelayRules RulesLeftOut { get; init; } = RulesLeftOutByDefault;

    /// <summary>Rules every options instance created from now on leaves out (FanOut.Tests sets it from FANOUT_TEST_LEAVE_OUT).</summary>
    internal static Limits.Adaptive.BandwidthDelayRules RulesLeftOutByDefault { get; set; }

    internal void Validate()
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(MinLimit, 1, nameof(MinLimit));
        ArgumentOutOfRangeException.ThrowIfLessThan(MaxLimit, MinLimit, nameof(MaxLimit));
        ArgumentOutOfRangeException.ThrowIfLessThan(InitialLimit, MinLimit, nameof(InitialLimit));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(InitialLimit, MaxLimit, nameof(InitialLimit));
        if (!(Headroom is >= 1.0 and <= 4.0))
        {
            throw new ArgumentOutOfRangeException(nameof(Headroom), Headroom, $"Headroom ({Headroom}) must be from 1 to 4 (the target's room above what the downstream was seen to carry; 1.25 by default).");
        }

        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(BackoffRatio, 0.0, nameof(BackoffRatio));
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual(BackoffRatio, 1.0, nameof(BackoffRatio));
        if (!(SlowStartPace >= 1.0))
        {
            throw new ArgumentOutOfRangeException(nameof(SlowStartPace), SlowStartPace, $"SlowStartPace ({SlowStartPace}) must be 1 or more (limits per baseline latency; PositiveInfinity for no pace).");
        }

        ArgumentNullException.ThrowIfNull(TimeProvider, nameof(TimeProvider));
    }
}
