using System.Security.Cryptography.X509Certificates;

namespace FanOut.Lab.Probing;

/// <summary>What <c>fanout probe</c> sends, and the hard stops it must respect.</summary>
public sealed record ProbeSettings
{
    /// <summary>The default for <see cref="MaxConcurrency"/>.</summary>
    public const int DefaultMaxConcurrency = 256;

    /// <summary>The largest <see cref="MaxConcurrency"/> accepted.</summary>
    public const int MaxAllowedConcurrency = 10_000;

    /// <summary>The default for <see cref="MaxRequests"/>: enough for a probe of an endpoint of a few thousand requests
    /// per second, and a hard stop for a fast one (which would otherwise take tens of thousands a second).</summary>
    public const long DefaultMaxRequests = 20_000;

    /// <summary>The default per-request timeout, in seconds.</summary>
    public const double DefaultTimeoutSeconds = 10;

    /// <summary>The endpoint probed: an absolute http or https URL.</summary>
    public required Uri Url { get; init; }

    /// <summary>The HTTP method of every request.</summary>
    /// <value>Default GET.</value>
    public HttpMethod Method { get; init; } = HttpMethod.Get;

    /// <summary>Headers sent with every request, in order (content headers go on the body).</summary>
    /// <value>Default none.</value>
    public IReadOnlyList<KeyValuePair<string, string>> Headers { get; init; } = [];

    /// <summary>The request body sent with every request; null for none.</summary>
    /// <value>Default null.</value>
    public ReadOnlyMemory<byte>? Body { get; init; }

    /// <summary>The highest concurrency the probe may try.</summary>
    /// <value>Default 256; 1 to <see cref="MaxAllowedConcurrency"/>.</value>
    public int MaxConcurrency { get; init; } = DefaultMaxConcurrency;

    /// <summary>Hard stop: the probe never sends more requests than this (the first, reachability, request included).</summary>
    /// <value>Default <see cref="DefaultMaxRequests"/>; at least 1; null for no limit.</value>
    public long? MaxRequests { get; init; } = DefaultMaxRequests;

    /// <summary>Hard pace: the probe never starts more requests per second than this, at any level.</summary>
    /// <value>Default null (no pace); positive. A level the pace held down ends the ramp with "at least N".</value>
    public double? MaxRatePerSecond { get; init; }

    /// <summary>Accept any TLS certificate (a self-signed development endpoint).</summary>
    /// <value>Default false.</value>
    public bool Insecure { get; init; }

    /// <summary>Extra roots to trust for TLS (the CA of a development endpoint); the host name must still match.</summary>
    /// <value>Default null (the system's roots only).</value>
    public X509Certificate2Collection? TrustedRoots { get; init; }

    /// <summary>Hard stop: the probe stops sending, and cancels what is in flight, after this long.</summary>
    /// <value>Default null (no limit); positive.</value>
    public TimeSpan? Duration { get; init; }

    /// <summary>How long one request may take before it counts as a timeout.</summary>
    /// <value>Default 10 s; positive.</value>
    public TimeSpan Timeout { get; init; } = TimeSpan.FromSeconds(DefaultTimeoutSeconds);

    /// <summary>The latency objective: a level whose p99 is above it is overloaded and never recommended.</summary>
    /// <value>Default null (no objective); positive milliseconds.</value>
    public double? SloP99Ms { get; init; }

    /// <summary>How long each level runs and how the rate check pauses.</summary>
    /// <value>Default <see cref="LevelPlan.Default"/>.</value>
    public LevelPlan Plan { get; init; } = LevelPlan.Default;
}
