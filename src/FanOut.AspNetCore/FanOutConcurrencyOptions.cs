namespace FanOut.AspNetCore;

/// <summary>How <c>UseFanOutConcurrency</c> admits, queues and refuses requests (see <c>AddFanOutConcurrency</c>).</summary>
/// <remarks>
/// Checked once at startup: a value out of range stops the host with one line naming the option
/// (<c>FanOutConcurrencyOptions.QueueLimit is -1: it must be 0 to 1,000,000.</c>).
/// </remarks>
public sealed class FanOutConcurrencyOptions
{
    /// <summary>The limit on requests in flight.</summary>
    /// <value>
    /// Default <see langword="null"/>: <see cref="DefaultLimit"/>, one <see cref="ConcurrencyLimit.Adaptive"/> with the server's
    /// options (<see cref="DefaultLimitOptions"/>), measured on <see cref="TimeProvider"/>, learning from each admitted
    /// request's latency and outcome. Pass any limit to choose the
    /// bounds, or to share one budget: the same instance given to a <c>FanOutAsync</c> loop or an <c>HttpClient</c> handler
    /// that calls the same database counts those calls against the same permits.
    /// </value>
    public ConcurrencyLimit? Limit { get; set; }

    /// <summary>The adaptive law's options at the server: the core's, started at 4.</summary>
    /// <value>
    /// <see cref="AdaptiveLimitOptions.InitialLimit"/> 4, not the core's 10: a client's start of 10 pays for pure waits (timers
    /// that answer together); a server's first requests go to its own constrained backend, where a start above the backend's
    /// capacity sends it that many requests before anything has answered (docs/server.md, "The server's starting limit").
    /// Start from it to change one knob and keep the others (<see cref="AdaptiveLimitOptions.Headroom"/> 1 trades throughput
    /// for the admitted latency; docs/server.md, "The law's level"):
    /// <c>ConcurrencyLimit.Adaptive(FanOutConcurrencyOptions.DefaultLimitOptions with { MaxLimit = 64 })</c>.
    /// <see cref="AdaptiveLimitOptions.Name"/> <c>server</c>: metrics and <c>fanout watch</c> tell the service's own admission
    /// from the limits of its outgoing calls.
    /// </value>
    public static AdaptiveLimitOptions DefaultLimitOptions { get; } = new() { InitialLimit = 4, Name = "server" };

    /// <summary>The limit a service gets when <see cref="Limit"/> is <see langword="null"/>: a new <see cref="ConcurrencyLimit.Adaptive"/> with <see cref="DefaultLimitOptions"/>, measured on <paramref name="timeProvider"/>.</summary>
    /// <remarks>Create one yourself to hold it (to read or share it with the service's outgoing calls) and pass it as <see cref="Limit"/>.</remarks>
    /// <param name="timeProvider">The clock latency is measured with.</param>
    /// <returns>A new limit.</returns>
    public static ConcurrencyLimit DefaultLimit(TimeProvider timeProvider)
    {
        ArgumentNullException.ThrowIfNull(timeProvider);
        return ConcurrencyLimit.Adaptive(DefaultLimitOptions with { TimeProvider = timeProvider });
    }

    /// <summary>The most requests that wait for a permit; beyond it a request is refused at once.</summary>
    /// <value>
    /// Default 1,000, range 0 (no queue: refused when no permit is free) to 1,000,000. A hard bound on memory; the queue
    /// the service really keeps is usually smaller (see <see cref="QueuePerPermit"/>).
    /// </value>
    public int QueueLimit { get; set; } = 1000;

    /// <summary>The queue room per permit of the limit's current value: the queue holds at most <c>ceil(QueuePerPermit × limit)</c> requests (and <see cref="QueueLimit"/>).</summary>
    /// <value>
    /// Default 0.1, range 0 to 100: one waiting request under a limit of up to 10, two up to 20. The adaptive limit's
    /// target is 1.25 times what the bottleneck serves at once, so the requests it admits beyond the bottleneck already
    /// wait there; the admission's own queue is only there so that a permit never idles for want of a waiting request,
    /// and each request in it adds its wait to the admitted latency. Over PostgreSQL pools of 4, 6 and 8 at 2x and 4x
    /// their capacity, 0.1 held the admitted p99 at 1.6-1.8x the uncontended where 0.25 read up to 2.4x, for the same
    /// goodput; 0 starved a CPU-bound service (docs/server.md, "Queue room"). A fixed limit set at the bottleneck's
    /// capacity has no room built in: give it a longer queue (0.25 to 1). <see cref="RequestPriority.Critical"/>
    /// requests may queue up to three limits' worth (<c>max(ceil(QueuePerPermit × limit), 3 × limit)</c>), so a short
    /// queue, or a stall of the machine, does not refuse them while room exists.
    /// </value>
    public double QueuePerPermit { get; set; } = 0.1;

    /// <summary>The queue fill (0 to 1) at which <see cref="RequestPriority.Normal"/> requests start to be refused at random.</summary>
    /// <value>
    /// Default 0.5, range 0 to 1. Between this fill and a full queue the chance of refusal rises linearly from 0 to 1
    /// (failsafe-go's gradual rejection), so the queue settles where arrivals and refusals balance instead of at its bound.
    /// <see cref="RequestPriority.Sheddable"/> requests ramp over the half below it (from <c>RejectionStart / 2</c> to
    /// <c>RejectionStart</c>); <see cref="RequestPriority.Critical"/> ones are never refused at random. 1 turns gradual
    /// rejection off for normal requests (refused only when the queue is full).
    /// </value>
    public double RejectionStart { get; set; } = 0.5;

    /// <summary>The share of the limit kept free for the highest priority seen in the last second: permits the lower priorities may not take.</summary>
    /// <value>
    /// Default 0.2, range 0 (no reserve) to 0.5. While a higher priority than its own arrived in the last second, a request
    /// may take a permit only if the requests this service admitted leave <c>floor(PriorityReserve × limit)</c> permits free:
    /// under an adaptive limit of 10 with critical requests about, normal and sheddable requests stop at 8 in flight and a
    /// critical request finds a permit free instead of queueing behind the next completion. Rounded down so that it stays
    /// within the part of an adaptive limit that is queue anyway (the adaptive law's target is 1.25 times what the bottleneck
    /// serves at once; the server's <see cref="DefaultLimitOptions"/> held the priorities row at 4.9-5.2 over a pool of 4),
    /// where it costs the lower priorities their place, not throughput; a larger share idled the bottleneck at 1x load
    /// (docs/server.md). A priority nobody sent for a second reserves nothing, so a service whose traffic is all one priority
    /// runs the whole limit. Under a fixed limit set at the bottleneck's capacity the reserve idles whenever the higher
    /// priority does not use it: set 0 there. The counts are this service's requests: its outgoing calls on a shared limit
    /// are not held back by it.
    /// </value>
    public double PriorityReserve { get; set; } = 0.2;

    /// <summary>The longest a request waits in the queue; then it is refused.</summary>
    /// <value>
    /// Default 1 second, range above zero to 1 hour. A request that waited a second for a permit is better refused with a
    /// Retry-After, so the client can go elsewhere, than served late; set it below the clients' own timeout.
    /// </value>
    public TimeSpan QueueTimeout { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>The longest a <see cref="RequestPriority.Sheddable"/> request waits in the queue, in service times: the measured median time an admitted request takes.</summary>
    /// <value>
    /// Default 0.5, range 0 (a sheddable request is admitted only when a permit is free, never queued) to 100. A sheddable
    /// request's answer takes its wait plus its service, and the queue serves every higher priority before it, so under
    /// overload the sheddable requests that are finally admitted are the slowest answers the service gives: a sheddable
    /// request that waited half a service time is refused instead (503 and Retry-After), and the one admitted after it is
    /// answered within about one and a half service times. The median is measured from the requests served (successes only),
    /// a step per request; until the first is served, and always for the other priorities, <see cref="QueueTimeout"/> bounds
    /// the wait, and it bounds this one too. Measured on PostgreSQL behind a pool of 4 at 4x its capacity with 20% critical
    /// requests (docs/server.md): the admitted p99 fell from 206 to 93 ms at the same goodput (it had been the sheddable
    /// requests' own, 255 ms against the critical requests' 112); 0.1 and 0.25 read the same within the machine's noise,
    /// and 0 costs a little goodput where permits idle between arrivals.
    /// </value>
    public double SheddableWaitPerServiceTime { get; set; } = 0.5;

    /// <summary>How much longer than its own place in the queue a <see cref="RequestPriority.Normal"/> request waits, in service times (the measured median time an admitted request takes).</summary>
    /// <value>
    /// Default 2, range 0 to 100. A normal request waits at most <c>QueuePerPermit + NormalWaitPerServiceTime</c> service
    /// times (2.1 by default; never less than <see cref="SheddableWaitPerServiceTime"/>). Served in order among
    /// themselves, normal requests find a queue of at most <see cref="QueuePerPermit"/> times the limit, which the limit's
    /// permits drain in <see cref="QueuePerPermit"/> service times: a normal request still waiting two service times after
    /// that waits behind the higher priorities (critical arrivals served first, and the reserve kept for them), and would
    /// be answered after three service times or more, late for its client, or never, at <see cref="QueueTimeout"/>. It is
    /// refused then (503 and Retry-After), while its client can still retry elsewhere. Until the first request is served,
    /// <see cref="QueueTimeout"/> bounds the wait, and it bounds this one too. <see cref="RequestPriority.Critical"/>
    /// requests wait up to <see cref="QueueTimeout"/>.
    /// </value>
    public double NormalWaitPerServiceTime { get; set; } = 2;

    /// <summary>Whether the thread pool's lag is read as the service's own CPU being its bottleneck.</summary>
    /// <value>
    /// Default <see langword="true"/>. While work waits in the thread pool longer than a request takes to serve (and more
    /// than 2 ms), a request beyond the machine's cores only waits for a core, before the admission sees it: the admission
    /// then holds at most <see cref="Environment.ProcessorCount"/> requests (half a second at first, twice as long each time
    /// the lag comes back soon after, up to 8 s), and a success with more than the cores in flight is an overload for the
    /// limit. Over a CPU-bound service (5 ms of hashing per request on 2 cores, at 2x and 4x its capacity) the admitted p99
    /// fell from 5-9x the uncontended to 1.5-2.1x, where a hand-tuned limit of the cores holds it (docs/server.md, "The cores'
    /// hold"). Turn it off for a service whose pool lags for reasons its own requests do not cause.
    /// </value>
    public bool WatchThreadPoolLag { get; set; } = true;

    /// <summary>The status code of a refused request.</summary>
    /// <value>
    /// Default 503 (Service Unavailable), which HTTP clients, proxies and FanOut.Http read as "overloaded, not processed";
    /// 429 (Too Many Requests) is the other common choice. Range 400 to 599.
    /// </value>
    public int RejectionStatusCode { get; set; } = 503;

    /// <summary>The Retry-After sent with a refusal, in whole seconds (rounded up).</summary>
    /// <value>Default 1 second, range 1 second to 1 hour.</value>
    public TimeSpan RetryAfter { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>The priority of a request when neither <see cref="PrioritySelector"/> nor the endpoint says one.</summary>
    /// <value>Default <see cref="RequestPriority.Normal"/>.</value>
    public RequestPriority DefaultPriority { get; set; } = RequestPriority.Normal;

    /// <summary>Chooses a request's priority from the request itself (a header, the user); <see langword="null"/> defers to the endpoint's metadata.</summary>
    /// <value>
    /// Default <see langword="null"/>: the endpoint's <see cref="IRequestPriorityMetadata"/>, else <see cref="DefaultPriority"/>.
    /// Runs on the request's thread before admission, outside every lock; if it throws, the request gets the endpoint's or
    /// the default priority and the exception is logged.
    /// </value>
    public Func<Microsoft.AspNetCore.Http.HttpContext, RequestPriority?>? PrioritySelector { get; set; }

    /// <summary>What to do with a request when the limit throws.</summary>
    /// <value>
    /// Default <see cref="LimiterFailureMode.Admit"/> (fail open): the limiter is protection, not correctness. A limit that
    /// throws (a distributed limit that lost its store) then costs the protection, logged at every failure, instead of
    /// refusing every request: an outage the limiter itself would cause. Choose <see cref="LimiterFailureMode.Refuse"/>
    /// when the limit guards something that must never see more load than it allows (writes to a database that falls over).
    /// </value>
    public LimiterFailureMode LimiterFailure { get; set; } = LimiterFailureMode.Admit;

    /// <summary>The clock of the queue timeout and, for the default adaptive limit, of latency.</summary>
    /// <value>Default <see cref="System.TimeProvider.System"/>; tests pass a fake one to drive time themselves.</value>
    public TimeProvider TimeProvider { get; set; } = TimeProvider.System;

    /// <summary>The first option out of range, as one line naming it; <see langword="null"/> when all are valid.</summary>
    internal string? FirstError()
    {
        const string Name = nameof(FanOutConcurrencyOptions);
        if (QueueLimit is < 0 or > 1_000_000)
        {
            return $"{Name}.{nameof(QueueLimit)} is {QueueLimit}: it must be 0 to 1,000,000.";
        }

        if (double.IsNaN(QueuePerPermit) || QueuePerPermit is < 0 or > 100)
        {
            return $"{Name}.{nameof(QueuePerPermit)} is {QueuePerPermit}: it must be 0 to 100.";
        }

        if (double.IsNaN(RejectionStart) || RejectionStart is < 0 or > 1)
        {
            return $"{Name}.{nameof(RejectionStart)} is {RejectionStart}: it must be 0 to 1 (a share of the queue).";
        }

        if (double.IsNaN(PriorityReserve) || PriorityReserve is < 0 or > 0.5)
        {
            return $"{Name}.{nameof(PriorityReserve)} is {PriorityReserve}: it must be 0 to 0.5 (a share of the limit; 0 turns the reserve off).";
        }

        if (double.IsNaN(SheddableWaitPerServiceTime) || SheddableWaitPerServiceTime is < 0 or > 100)
        {
            return $"{Name}.{nameof(SheddableWaitPerServiceTime)} is {SheddableWaitPerServiceTime}: it must be 0 to 100 (service times; 0: sheddable requests never wait).";
        }

        if (double.IsNaN(NormalWaitPerServiceTime) || NormalWaitPerServiceTime is < 0 or > 100)
        {
            return $"{Name}.{nameof(NormalWaitPerServiceTime)} is {NormalWaitPerServiceTime}: it must be 0 to 100 (service times beyond the queue's own drain time).";
        }

        if (QueueTimeout <= TimeSpan.Zero || QueueTimeout > TimeSpan.FromHours(1))
        {
            return $"{Name}.{nameof(QueueTimeout)} is {QueueTimeout}: it must be above zero and at most 1 hour.";
        }

        if (RejectionStatusCode is < 400 or > 599)
        {
            return $"{Name}.{nameof(RejectionStatusCode)} is {RejectionStatusCode}: it must be 400 to 599 (503 or 429 are the usual).";
        }

        if (RetryAfter < TimeSpan.FromSeconds(1) || RetryAfter > TimeSpan.FromHours(1))
        {
            return $"{Name}.{nameof(RetryAfter)} is {RetryAfter}: it must be 1 second to 1 hour.";
        }

        if (!Enum.IsDefined(DefaultPriority))
        {
            return $"{Name}.{nameof(DefaultPriority)} is {(int)DefaultPriority}: it must be one of {string.Join(", ", Enum.GetNames<RequestPriority>())}.";
        }

        if (!Enum.IsDefined(LimiterFailure))
        {
            return $"{Name}.{nameof(LimiterFailure)} is {(int)LimiterFailure}: it must be one of {string.Join(", ", Enum.GetNames<LimiterFailureMode>())}.";
        }

        if (TimeProvider is null)
        {
            return $"{Name}.{nameof(TimeProvider)} is null: leave it at TimeProvider.System or pass a clock.";
        }

        return null;
    }
}
