namespace FanOut;

/// <summary>One failed item of a <see cref="ErrorMode.RunAll"/> fan-out.</summary>
/// <param name="Index">The item's position in the source (0-based; 64-bit, so it stays exact past 2^31 items of an endless source).</param>
/// <param name="Exception">What its body threw.</param>
public readonly record struct FanOutFailure(long Index, Exception Exception)
{
    /// <summary>
    /// An exception a user callback threw while the item's failure was judged (a throwing
    /// <see cref="AdaptiveLimitOptions.IsOverload"/>, treated as "not an overload"); <see langword="null"/> when none did.
    /// </summary>
    public Exception? CallbackException { get; init; }
}
