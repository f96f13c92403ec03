namespace FanOut.Lab.Probing;

/// <summary>What the level-stopping rule made of one level.</summary>
/// <param name="Clean">No failure of any kind, and the p99 within the objective when one was given: a level that may be recommended.</param>
/// <param name="Stop">Go no higher: the level was overloaded, or more concurrency stopped adding throughput.</param>
/// <param name="Reason">Why it stopped, in a few words; null when it goes on.</param>
public sealed record LevelVerdict(bool Clean, bool Stop, string? Reason);
