namespace FanOut;

/// <summary>
/// The failures of a <see cref="ErrorMode.RunAll"/> fan-out: every item ran, and these threw. As an
/// <see cref="AggregateException"/>, <see cref="AggregateException.InnerExceptions"/> lists the same exceptions in index order.
/// </summary>
public class FanOutException : AggregateException
{
    /// <summary>Creates the exception for <paramref name="failures"/> out of <paramref name="itemCount"/> items.</summary>
    /// <param name="failures">The failed items, in index order.</param>
    /// <param name="itemCount">How many items ran in all.</param>
    public FanOutException(IReadOnlyList<FanOutFailure> failures, int itemCount)
        : base(
            $"{(failures ?? throw new ArgumentNullException(nameof(failures))).Count} of {itemCount} items failed.",
            failures.Select(static f => f.Exception))
    {
        Failures = failures;
        ItemCount = itemCount;
    }

    /// <summary>Each failed item's index and exception, in index order.</summary>
    public IReadOnlyList<FanOutFailure> Failures { get; }

    /// <summary>How many items ran, failed or not.</summary>
    public int ItemCount { get; }
}
