namespace FanOut;

/// <summary>
/// What a limit you write says about itself, given once to <see cref="ConcurrencyLimit(LimitTraits)"/>: facts about the
/// limit, from which FanOut's runs decide how to use it (when workers give permits back, whether a call keeps a worker
/// waiting for new room, whether items are timed). A limit that says nothing is a pool of <see cref="ConcurrencyLimit.Current"/>
/// permits taken only through its own methods, in this process.
/// </summary>
[Flags]
public enum LimitTraits
{
    /// <summary>None of the others.</summary>
    None = 0,

    /// <summary>
    /// It learns from the work: every attempt is timed for its <c>OnItemStarting</c> and <c>OnItemCompleted</c>, whether
    /// metrics listen or not (without it a run skips them while nobody listens).
    /// </summary>
    LearnsFromWork = 1,

    /// <summary>
    /// Its <see cref="ConcurrencyLimit.Current"/> may rise with nothing completing (set from outside, on a schedule): a call
    /// then keeps one worker waiting for the new room instead of retiring it.
    /// </summary>
    RisesUnprompted = 2,

    /// <summary>
    /// Others than this process's callers take its permits (other processes, a server): a worker gives its permit back after
    /// every item, waits for room rather than retiring, and never holds a permit while its source is quiet.
    /// </summary>
    SharedAcrossProcesses = 4,
}
