namespace FanOut;

/// <summary>One failed item of a <see cref="ErrorMode.RunAll"/> fan-out.</summary>
/// <param name="Index">The item's position in the source (0-based).</param>
/// <param name="Exception">What its body threw.</param>
public readonly record struct FanOutFailure(int Index, Exception Exception);
