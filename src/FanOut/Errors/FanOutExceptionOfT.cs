namespace FanOut;

/// <summary>
/// The failures of a <see cref="ErrorMode.RunAll"/> fan-out that returns results, with the results of the items that succeeded.
/// </summary>
/// <typeparam name="TResult">The result type.</typeparam>
public sealed class FanOutException<TResult> : FanOutException
{
    private readonly TResult[] _results;
    private readonly bool[] _failed;

    /// <summary>Creates the exception.</summary>
    /// <param name="failures">The failed items, in index order.</param>
    /// <param name="results">One slot per item in source order; failed items' slots hold <see langword="default"/>.</param>
    public FanOutException(IReadOnlyList<FanOutFailure> failures, TResult[] results)
        : this(failures, results, [])
    {
    }

    /// <summary>Creates the exception, with what the source threw besides the bodies.</summary>
    /// <param name="failures">The failed items, in index order.</param>
    /// <param name="results">One slot per item in source order; failed items' slots hold <see langword="default"/>.</param>
    /// <param name="sourceExceptions">What the source threw (MoveNext, Dispose), if anything.</param>
    public FanOutException(IReadOnlyList<FanOutFailure> failures, TResult[] results, IReadOnlyList<Exception> sourceExceptions)
        : base(failures, (results ?? throw new ArgumentNullException(nameof(results))).Length, failures?.Count ?? 0, sourceExceptions)
    {
        _results = results;
        _failed = new bool[results.Length];
        foreach (var failure in failures!)
        {
            _failed[failure.Index] = true;
        }
    }

    /// <summary>Every item's result in source order; the slots of failed items hold <see langword="default"/> (see <see cref="Succeeded"/>).</summary>
    public IReadOnlyList<TResult?> Results => _results;

    /// <summary>Whether item <paramref name="index"/> succeeded, so that <c>Results[index]</c> is its result.</summary>
    /// <param name="index">The item's position in the source, as <see cref="FanOutFailure.Index"/> carries it.</param>
    /// <returns>True if the item's body completed successfully.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is not the index of an item.</exception>
    public bool Succeeded(long index) => !_failed[CheckedIndex(index)];

    /// <summary>Gets item <paramref name="index"/>'s result if it succeeded.</summary>
    /// <param name="index">The item's position in the source, as <see cref="FanOutFailure.Index"/> carries it.</param>
    /// <param name="result">The result, or <see langword="default"/> when the item failed.</param>
    /// <returns>True if the item succeeded.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is not the index of an item.</exception>
    public bool TryGetResult(long index, out TResult result)
    {
        var at = CheckedIndex(index);
        result = _results[at];
        return !_failed[at];
    }

    private int CheckedIndex(long index)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(index);
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual(index, _results.Length);
        return (int)index;
    }
}
