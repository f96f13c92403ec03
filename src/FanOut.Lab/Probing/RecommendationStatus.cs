namespace FanOut.Lab.Probing;

/// <summary>The values of <see cref="Recommendation.Status"/>.</summary>
public static class RecommendationStatus
{
    /// <summary>The endpoint was saturated (rejections, added latency or a rate limit), the capacity found, and the
    /// open-loop check held: the limit, with code to paste.</summary>
    public const string Final = "final";

    /// <summary>The probe stopped before the endpoint showed its limit (interrupted, <c>--max-requests</c>,
    /// <c>--duration</c>, <c>--max-concurrency</c>, <c>--max-rate</c>): its capacity is at least the limit given.</summary>
    public const string AtLeast = "at-least";

    /// <summary>The limit was found, but under open-loop load at 0.9x its throughput the queue grew or requests were rejected.</summary>
    public const string Unconfirmed = "unconfirmed";

    /// <summary>Nothing to recommend: every level failed, or nothing was measured.</summary>
    public const string None = "none";
}
