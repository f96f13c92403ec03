namespace FanOut.Limits.Adaptive;

/// <summary>
/// The rules of <see cref="BandwidthDelayLaw"/> that the ablation can leave out, one at a time (docs/adaptive.md, "Ablation"):
/// each names the scenario that fails without it, and <c>LawAblationTests</c> asserts that it does.
/// </summary>
[Flags]
internal enum BandwidthDelayRules
{
    /// <summary>No rule left out.</summary>
    None = 0,

    /// <summary>Slow start grants the answers its per-answer test held back when the next cohort did not queue (a heavy tail judged from the first answer).</summary>
    HeldBackGrant = 1 << 0,

    /// <summary>Slow start ends on three answers four times faster than the first round's fastest: that round was cold (a cold first round over a small pool).</summary>
    ColdFirstRound = 1 << 1,

    /// <summary>Slow start's queue exit waits for a second queued cohort, of items started after the first was judged (one round stalled in slow start).</summary>
    StallIsNotAQueue = 1 << 2,

    /// <summary>The cut only on a latency without a queue that a drain measured (halving on a heavy tail behind a hard cap).</summary>
    CutOnMeasuredBase = 1 << 3,

    /// <summary>A drain whose latency fell in proportion to its level goes on at half the level (CPU-bound bodies on 2 cores).</summary>
    DeeperDrain = 1 << 4,


    /// <summary>A reading twice the latency without a queue keeps only its own rate (capacity and latency degrading slowly).</summary>
    QueuedReadingForgetsRates = 1 << 5,

    /// <summary>A passed probe with no latency without a queue measured drains (a pool that refused, then queued).</summary>
    DrainWhenProbePassesUnmeasured = 1 << 6,

    /// <summary>A reading's rate is taken less one standard error before the model keeps the most of ten (a pool of 64 with a queue and lognormal service).</summary>
    RateLessOneStandardError = 1 << 7,


    /// <summary>Slow start's queue tests read against the least geometric mean of two consecutive cohort medians, not the least single one, which falls with every cohort judged (a heavy tail without overload at the server's place).</summary>
    PairedSlowStartReference = 1 << 8,

    /// <summary>Only a cohort at a level slow start has not judged before moves its reference (a heavy tail without overload at the server's place, where slow start sits at the most limit).</summary>
    ReferenceFromNewLevels = 1 << 9,

    /// <summary>The model's rate is the most of the newest reading and the geometric means of consecutive older ones, not of single readings (lognormal pools of 8: settled within 0.7-1.5x C).</summary>
    PairedRates = 1 << 10,

    /// <summary>A drain whose cohort read 1.5x the latency without a queue forgets what was read before it, the rates and the pool's older cohorts (a latency drift: capacity 32 -> 8 and latency 20 -> 100 ms).</summary>
    NewBaseForgetsRates = 1 << 11,

    /// <summary>A drain whose level still carried the most rate read at the latency it measured (Little's law) goes on at half the level, as one whose latency fell in proportion does (lognormal CPU-bound bodies on 2 cores).</summary>
    SaturatedDrainGoesDeeper = 1 << 12,

    /// <summary>A "no" backs off from the limit less the refused call, so a refused probe leaves less than the level that held (independent clients sharing a cap).</summary>
    CutBelowTheRefusedCall = 1 << 13,

    /// <summary>A fresh "no" below the level that said no brings the probes back to their least spacing: another client took the room (independent clients sharing a cap).</summary>
    ReprobeWhenRoomTaken = 1 << 14,

    /// <summary>A probe that passed doubles the next probe's step, up to half the limit (recovery after a long low: the capacity is back).</summary>
    ProbeStepDoubles = 1 << 15,

    /// <summary>A reading queued at twice the latency without a queue drains to re-measure it before any cut, and the drain's end takes that reading's rate at the latency it measured (a latency drift: capacity 32 -> 8 and latency 20 -> 100 ms).</summary>
    QueuedReadingRemeasures = 1 << 16,

    /// <summary>A "no" slower than an answer reads the calls in flight as no fewer than a back-off of what the downstream carried: those calls may be the refusals themselves (a cap whose "no" holds its place in service).</summary>
    SlowNoKeepsWhatWasCarried = 1 << 17,

    /// <summary>The first probe after a cut waits 32 times the time by which the "no" was slower than an answer, as well as its round trips (a cap whose "no" holds its place in service).</summary>
    ProbesSpacedByNoLatency = 1 << 18,

    /// <summary>Once the calls sent before a Retry-After pause have answered, one call tests it, and its answer ends the pause (a cap whose 429s carry a Retry-After).</summary>
    PauseTestedByOneCall = 1 << 19,

    /// <summary>A Retry-After on the first "no" to a probe does not pause: the probe asked for that "no", and the law backs off from it (a cap whose 429s carry a Retry-After).</summary>
    RefusedProbeDoesNotPause = 1 << 20,

    /// <summary>A steady reading's rate is read while the limit bound, where the caller had nothing to send for part of it (a shared limit between calls, under a latency drift).</summary>
    RateReadWhileTheLimitBinds = 1 << 21,

    /// <summary>Slow start grants its held-back answers less the share of the queue test's bar its cohort's median rose by (a smooth knee behind a heavy tail).</summary>
    GrantInProportionToTheRise = 1 << 22,
}
