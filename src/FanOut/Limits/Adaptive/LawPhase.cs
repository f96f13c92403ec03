namespace FanOut.Limits.Adaptive;

/// <summary>Where the adaptive law is: which of its rules decide the next window. The law alone changes it.</summary>
internal enum LawPhase
{
    /// <summary>Each clean answer adds a permit; a round that reads a queue, or an overload, ends it (TCP's slow start).</summary>
    SlowStart,

    /// <summary>Slow start held at a round's level: the next round confirms the queue the last one read (it ends), or refutes it (growth resumes).</summary>
    ConfirmingQueue,

    /// <summary>After slow start: the latency band, the overload back-off and the probes decide once per window.</summary>
    Steady,

    /// <summary>After slow start, the limit pinned at the first window's size while a thin baseline pool is refilled.</summary>
    Remeasuring,

    /// <summary>After slow start, the limit pinned below the level the baseline was measured at, which read shared.</summary>
    RemeasuringBelowKnee,
}
