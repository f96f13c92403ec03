namespace FanOut;

/// <summary>
/// The failures of a <see cref="ErrorMode.RunAll"/> fan-out: every item ran, and these threw. As an
/// <see cref="AggregateException"/>, <see cref="AggregateException.InnerExceptions"/> lists the same exceptions in index order,
/// followed by <see cref="SourceExceptions"/>.
/// </summary>
/// <remarks>
/// A stream (<c>FanOutStream</c>) keeps at most the first <see cref="FanOutStreamRetainedFailures"/> failures, so that an
/// endless source runs in bounded memory; <see cref="FailureCount"/> still counts all of them. To see every failure as it
/// happens, enumerate <c>FanOutOutcomes</c> instead.
/// </remarks>
public class FanOutException : AggregateException
{
    /// <summary>The most failures a stream's exception keeps (the first ones, in completion order; sorted by index).</summary>
    public const int FanOutStreamRetainedFailures = 100;

    /// <summary>Creates the exception for <paramref name="failures"/> out of <paramref name="itemCount"/> items.</summary>
    /// <param name="failures">The failed items, in index order.</param>
    /// <param name="itemCount">How many items ran in all.</param>
    public FanOutException(IReadOnlyList<FanOutFailure> failures, long itemCount)
        : this(failures, itemCount, (failures ?? throw new ArgumentNullException(nameof(failures))).Count, [])
    {
    }

    /// <summary>Creates the exception, with the count of failures not kept and the source's own exceptions.</summary>
    /// <param name="failures">The failed items kept, in index order.</param>
    /// <param name="itemCount">How many items ran in all.</param>
    /// <param name="failureCount">How many items failed, kept or not (at least <c>failures.Count</c>).</param>
    /// <param name="sourceExceptions">What the source threw (GetEnumerator, MoveNext, Dispose), if anything.</param>
    public FanOutException(IReadOnlyList<FanOutFailure> failures, long itemCount, long failureCount, IReadOnlyList<Exception> sourceExceptions)
        : base(
            Describe(failures, itemCount, failureCount, sourceExceptions),
            failures.Select(static f => f.Exception).Concat(sourceExceptions))
    {
        Failures = failures;
        ItemCount = itemCount;
        FailureCount = failureCount;
        SourceExceptions = sourceExceptions;
    }

    /// <summary>Each failed item's index and exception, in index order (for a stream, the first ones only: see remarks).</summary>
    public IReadOnlyList<FanOutFailure> Failures { get; }

    /// <summary>How many items ran, failed or not.</summary>
    public long ItemCount { get; }

    /// <summary>How many items failed, including those not kept in <see cref="Failures"/>.</summary>
    public long FailureCount { get; }

    /// <summary>
    /// What the source threw besides the bodies (its enumerator's MoveNext or Dispose): carried here so that the body failures,
    /// and the partial results of <see cref="FanOutException{TResult}"/>, are never hidden behind them.
    /// </summary>
    public IReadOnlyList<Exception> SourceExceptions { get; }

    private static string Describe(IReadOnlyList<FanOutFailure> failures, long itemCount, long failureCount, IReadOnlyList<Exception> sourceExceptions)
    {
        ArgumentNullException.ThrowIfNull(failures);
        ArgumentNullException.ThrowIfNull(sourceExceptions);
        ArgumentOutOfRangeException.ThrowIfLessThan(failureCount, failures.Count);
        var kept = failureCount > failures.Count ? $" (the first {failures.Count} kept)" : "";
        var source = sourceExceptions.Count > 0 ? $"; the source also threw {sourceExceptions.Count} exception(s)" : "";
        return $"{failureCount} of {itemCount} items failed{kept}{source}.";
    }
}
