namespace FanOut.Http;

/// <summary>How <see cref="FanOutLimitHandler"/> limits, judges and re-sends requests.</summary>
public sealed record FanOutHttpOptions
{
    /// <summary>The default of <see cref="MaxResends"/>: FanOut's default <c>FanOutOptions.OverloadRetries</c>.</summary>
    public const int DefaultMaxResends = 8;

    /// <summary>The adaptive law's options for a host when <see cref="LimitFactory"/> is null: the core's, with one per-place parameter.</summary>
    /// <value>
    /// <see cref="AdaptiveLimitOptions.SlowStartPace"/> 1 instead of 4: each request slow start adds opens a connection, a
    /// burst of which takes 10-15 ms over loopback on a busy machine, and the 429 to the first one over a server's capacity
    /// comes back behind them; paced over a whole round trip, fewer are sent before it (against a hard cap of 64, 5 of 36
    /// fresh processes refused over 5% at 4, 1 at 1: docs/adaptive.md). The back-off is the core's 0.8: the gentler 0.9 it
    /// had kept one client at a cap it shared (two clients on a cap of 8, Jain 0.50), for 0.93x instead of 1.00x of a
    /// hand-picked Fixed(16) alone at a 16-slot server (docs/adaptive.md, "Independent clients"). Start from it to
    /// change one knob: <c>LimitFactory = _ =&gt; ConcurrencyLimit.Adaptive(FanOutHttpOptions.DefaultLimitOptions with { MaxLimit = 32 })</c>.
    /// </value>
    public static AdaptiveLimitOptions DefaultLimitOptions { get; } = new() { SlowStartPace = 1 };

    /// <summary>Makes the limit of one destination, given its key <c>host:port</c> (<c>api.example.com:443</c>).</summary>
    /// <value>Default <see langword="null"/>: one <see cref="ConcurrencyLimit.Adaptive"/> per host, with <see cref="DefaultLimitOptions"/>
    /// and the host in its <see cref="AdaptiveLimitOptions.Name"/> (<c>http:api.example.com:443</c>), so each change of a host's
    /// limit is published under its host.</value>
    public Func<string, ConcurrencyLimit>? LimitFactory { get; init; }

    /// <summary>How many times one request may be re-sent after the server said it did not process it (429, 503).</summary>
    /// <value>Default <see cref="DefaultMaxResends"/> (8), range 0 (never re-send) to 100.</value>
    public int MaxResends { get; init; } = DefaultMaxResends;

    /// <summary>Whether a request whose method is not idempotent (POST, PATCH, CONNECT) may be re-sent after a 429 or 503.</summary>
    /// <value>
    /// Default false: only GET, HEAD, OPTIONS, PUT, DELETE and TRACE are re-sent. A 429 or 503 says the server did not
    /// process the request, but a proxy or a server that answers 503 after doing part of the work makes that a promise
    /// only an idempotent method can rely on.
    /// </value>
    public bool ResendNonIdempotent { get; init; }

    /// <summary>The longest Retry-After the handler waits out before re-sending; a longer one returns the 429 or 503 as it came.</summary>
    /// <value>Default 1 minute (FanOut's own cap on a hint), range zero to 1 hour.</value>
    public TimeSpan MaxRetryAfter { get; init; } = TimeSpan.FromMinutes(1);

    /// <summary>How long one attempt may take before it is abandoned as a timeout (which backs the limit off and is never re-sent).</summary>
    /// <value>
    /// Default <see langword="null"/>: no timeout of the handler's own. <see cref="HttpClient.Timeout"/> reaches a handler as
    /// a plain cancellation, which it cannot tell from the caller's and reports as canceled; set this (below
    /// <see cref="HttpClient.Timeout"/>) for timeouts to back the limit off. Measured on the limit's
    /// <see cref="ConcurrencyLimit.TimeProvider"/>.
    /// </value>
    public TimeSpan? AttemptTimeout { get; init; }

    /// <summary>How many destinations get a limit of their own; requests to further hosts share one more limit.</summary>
    /// <value>Default 256, range 1 to 65,536: the map of limits stays bounded however many hosts a client calls.</value>
    public int MaxHosts { get; init; } = 256;

    internal void Validate()
    {
        if (MaxResends is < 0 or > 100)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxResends), MaxResends, "MaxResends must be 0 (never re-send) to 100.");
        }

        if (MaxRetryAfter < TimeSpan.Zero || MaxRetryAfter > TimeSpan.FromHours(1))
        {
            throw new ArgumentOutOfRangeException(nameof(MaxRetryAfter), MaxRetryAfter, "MaxRetryAfter must be zero to 1 hour.");
        }

        if (AttemptTimeout is { } timeout && (timeout <= TimeSpan.Zero || timeout == Timeout.InfiniteTimeSpan))
        {
            throw new ArgumentOutOfRangeException(nameof(AttemptTimeout), timeout, "AttemptTimeout must be positive and finite, or null for none.");
        }

        if (MaxHosts is < 1 or > 65_536)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxHosts), MaxHosts, "MaxHosts must be 1 to 65,536.");
        }
    }
}
