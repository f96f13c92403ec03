namespace FanOut;

/// <summary>Why an adaptive limit changed: each change FanOut publishes (EventSource, meter, activity event) carries one.</summary>
/// <remarks>docs/adaptive.md says which rule of the law gives each reason and the figures it was decided on.</remarks>
public enum LimitChangeReason
{
    /// <summary>The limit did not change (a reading that held it, or a decision still gathering evidence).</summary>
    Hold = 0,

    /// <summary>Slow start: an answer that did not queue, with more than half the limit in use, added a permit (granted at slow start's pace); a cohort that did not queue grants the answers held back from it.</summary>
    SlowStartGrowth,

    /// <summary>A queue was read: in slow start, a cohort's median well above the least before it (slow start ends, and the limit drains below what the downstream carries); after it, more calls in flight than the model's target (the limit goes to it).</summary>
    QueueSeen,

    /// <summary>The downstream said it was overloaded (HTTP 429/503, <see cref="OverloadedException"/>, a timeout): multiplicative back-off.</summary>
    Overload,

    /// <summary>After slow start, the model had room above the limit (or, below a level that said no, a round trip passed): the limit grew.</summary>
    Growth,

    /// <summary>The limit stepped onto or past the level that last said no, after holding below it: a spaced probe.</summary>
    Probe,

    /// <summary>The latency without a queue is measured: the limit drains below what the downstream carries, or deeper when the drain still queued.</summary>
    Remeasure,

    /// <summary>A drain measured the latency without a queue: the limit went to the model's target (after a cold first round, to the initial limit, and slow start began again).</summary>
    RemeasureDone,

    /// <summary>The downstream answered with a Retry-After: no permit is granted (the limit reads 0) until it has passed, but one call tests it once the calls sent before it have answered (the limit reads 1).</summary>
    RetryAfterPause,

    /// <summary>A Retry-After pause has passed: the limit is granted again at its level before the pause.</summary>
    PauseEnded,

    /// <summary>The call that tested a Retry-After pause was answered: the downstream refused only calls beyond its room, so the pause ends early at the law's limit.</summary>
    PauseLifted,
}
