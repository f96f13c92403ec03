namespace FanOut;

/// <summary>Why an adaptive limit changed: each change FanOut publishes (EventSource, meter, activity event) carries one.</summary>
/// <remarks>docs/adaptive.md says which rule of the law gives each reason and the figures it was decided on.</remarks>
public enum LimitChangeReason
{
    /// <summary>The limit did not change (a window that held it, or a decision still gathering evidence).</summary>
    Hold = 0,

    /// <summary>Slow start: an answer that did not queue, with more than half the limit in use, added a permit (granted at slow start's pace).</summary>
    SlowStartGrowth,

    /// <summary>A round (in slow start) or a window (after it, right after one within the band) read far more latency than a queue could add in one: a stall until the next confirms it; in slow start the limit goes back to the round's level.</summary>
    QueueSuspected,

    /// <summary>Latency rose past the band around the baseline: the limit shrank so that, by Little's law, the queue drains (this ends slow start).</summary>
    QueueSeen,

    /// <summary>The downstream said it was overloaded (HTTP 429/503, <see cref="OverloadedException"/>, a timeout): multiplicative back-off.</summary>
    Overload,

    /// <summary>After slow start, a window read below the growth threshold: the limit grew.</summary>
    Growth,

    /// <summary>The limit stepped onto or past the level that last rejected (or bought no throughput), after holding below it: a spaced probe.</summary>
    Probe,

    /// <summary>A step of the limit bought no throughput (latency rose with it), or a step down cost none: the limit went to the knee.</summary>
    KneeFound,

    /// <summary><see cref="AdaptiveLimitOptions.GrowthMustBuyThroughput"/>: the limit stepped down one to test whether the level above it was past the knee.</summary>
    KneeTest,

    /// <summary>The baseline latency is re-measured: the limit is pinned low while it is.</summary>
    Remeasure,

    /// <summary>The baseline has been re-measured: the limit went back toward its level before the pin.</summary>
    RemeasureDone,

    /// <summary>The downstream answered with a Retry-After: no permit is granted (the limit reads 0) until it has passed.</summary>
    RetryAfterPause,

    /// <summary>A Retry-After pause has passed: the limit is granted again at its level before the pause.</summary>
    PauseEnded,
}
