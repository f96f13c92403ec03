namespace FanOut;

/// <summary>What became of one item of <c>FanOutOutcomes</c>: its index and either its result or its exception.</summary>
/// <typeparam name="TResult">The result type.</typeparam>
/// <param name="Index">The item's position in the source (0-based, 64-bit).</param>
/// <param name="Result">The body's result; <see langword="default"/> when it failed.</param>
/// <param name="Exception">What the body threw; <see langword="null"/> when it succeeded.</param>
public readonly record struct FanOutOutcome<TResult>(long Index, TResult? Result, Exception? Exception)
{
    /// <summary>True when the body completed successfully and <see cref="Result"/> is its result.</summary>
    public bool Succeeded => Exception is null;
}
