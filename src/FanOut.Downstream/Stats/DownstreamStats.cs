using System.Text.Json;

namespace FanOut.Downstream.Stats;

/// <summary>The server-side counters as <c>GET /stats</c> returns them (camelCase JSON) and <see cref="DownstreamServer.GetStats"/> reads them in-process.</summary>
/// <remarks>Counters count since start or the last reset; <see cref="InFlight"/> and <see cref="Queued"/> are current state.</remarks>
public sealed record DownstreamStats
{
    /// <summary>Requests to <c>/item</c> or <c>/price</c> that got a slot, waited their latency and were answered 200.</summary>
    public long RequestsServed { get; init; }

    /// <summary>Requests that were admitted (in a slot or the queue) but ended before their answer: the client cancelled or the server crashed.</summary>
    public long RequestsCancelled { get; init; }

    /// <summary>All 429 answers: <see cref="Rejected429Capacity"/> + <see cref="Rejected429RateLimit"/> + <see cref="Rejected429Storm"/>.</summary>
    public long Rejected429 { get; init; }

    /// <summary>429 answers because all slots and queue places were taken (header <c>X-Reject-Reason: capacity</c>).</summary>
    public long Rejected429Capacity { get; init; }

    /// <summary>429 answers because the token bucket was empty (header <c>X-Reject-Reason: rate-limit</c>, plus <c>Retry-After</c>).</summary>
    public long Rejected429RateLimit { get; init; }

    /// <summary>429 answers during a Retry-After storm (header <c>X-Reject-Reason: storm</c>, plus <c>Retry-After</c>).</summary>
    public long Rejected429Storm { get; init; }

    /// <summary>403 answers to requests whose remote address was not loopback (should stay 0).</summary>
    public long RejectedNotLoopback { get; init; }

    /// <summary>Requests holding a slot right now (at most <see cref="Capacity"/>, unless the capacity was just lowered under them).</summary>
    public int InFlight { get; init; }

    /// <summary>Requests waiting for a slot right now (at most the queue limit).</summary>
    public int Queued { get; init; }

    /// <summary>The most requests that held a slot at the same time; never above the highest capacity in effect since the last reset.</summary>
    public int PeakConcurrentServed { get; init; }

    /// <summary>
    /// The most requests at the slots and the queue at the same time since the last reset: served, waiting, or being turned
    /// away there. The slots and the queue hold capacity + queue at most, so a peak above that is a capacity 429 and a
    /// client that never brought that many at once was owed none.
    /// </summary>
    public int PeakAtGate { get; init; }

    /// <summary>The capacity N in effect now: <see cref="DownstreamOptions.Capacity"/> unless a change set another.</summary>
    public int Capacity { get; init; }

    /// <summary>The queue length Q in effect now.</summary>
    public int QueueLimit { get; init; }

    /// <summary>The latency SPEC in effect now, e.g. <c>fixed:20</c>.</summary>
    public string Latency { get; init; } = string.Empty;

    /// <summary>The name of the phase the server plays now: <c>start</c> until a change names another.</summary>
    public string Phase { get; init; } = string.Empty;

    /// <summary>Seconds left of the Retry-After storm under way; 0 when none is.</summary>
    public double StormSecondsLeft { get; init; }

    /// <summary>Median server-side latency of served requests (queue wait + simulated work + writing the answer), in ms; 0 when none.</summary>
    /// <remarks>From a histogram with 1.6% relative resolution, rounded up to the bucket's upper bound.</remarks>
    public double LatencyP50Ms { get; init; }

    /// <summary>95th-percentile server-side latency of served requests, in ms; 0 when none.</summary>
    public double LatencyP95Ms { get; init; }

    /// <summary>99th-percentile server-side latency of served requests, in ms; 0 when none.</summary>
    public double LatencyP99Ms { get; init; }

    /// <summary>Largest server-side latency of a served request, in ms; 0 when none.</summary>
    public double LatencyMaxMs { get; init; }

    /// <summary>Reads the JSON body of <c>GET /stats</c>.</summary>
    /// <param name="json">The response body.</param>
    /// <returns>The counters.</returns>
    /// <exception cref="JsonException">The text is not a stats document.</exception>
    public static DownstreamStats FromJson(string json)
    {
        ArgumentNullException.ThrowIfNull(json);
        return JsonSerializer.Deserialize(json, Endpoints.DownstreamJsonContext.Default.DownstreamStats)
            ?? throw new JsonException("The stats document is null.");
    }
}
