namespace FanOut.Execution;

/// <summary>What a stream yields for each published outcome: the result alone (<c>FanOutStream</c>) or the whole outcome (<c>FanOutOutcomes</c>).</summary>
/// <typeparam name="TResult">The body's result type.</typeparam>
/// <typeparam name="TOut">What the stream yields.</typeparam>
internal interface IOutcomeProjection<TResult, TOut>
{
    static abstract TOut Project(FanOutOutcome<TResult> outcome);
}

/// <summary>Yields the result (only successes are published to such a stream).</summary>
internal readonly struct ResultOnly<TResult> : IOutcomeProjection<TResult, TResult>
{
    public static TResult Project(FanOutOutcome<TResult> outcome) => outcome.Result!;
}

/// <summary>Yields the outcome itself.</summary>
internal readonly struct WholeOutcome<TResult> : IOutcomeProjection<TResult, FanOutOutcome<TResult>>
{
    public static FanOutOutcome<TResult> Project(FanOutOutcome<TResult> outcome) => outcome;
}
