namespace FanOut.Lab.Strategies;

/// <summary>Where a strategy's own limit stood after a run: for FanOut's adaptive limit, where it settled and how high it went.</summary>
/// <param name="Final">The limit when the run ended.</param>
/// <param name="Peak">The highest the limit went during the run.</param>
public sealed record LimitReading(int Final, int Peak);
