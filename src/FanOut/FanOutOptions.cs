namespace FanOut;

/// <summary>How one fan-out call runs: its concurrency limit, its error mode and, for streams, its ordering.</summary>
public sealed record FanOutOptions
{
    /// <summary>The options used when a caller passes <see langword="null"/>.</summary>
    internal static FanOutOptions Default { get; } = new();

    /// <summary>The budget of items in flight at once.</summary>
    /// <value>
    /// Default <see langword="null"/>: a fresh <see cref="ConcurrencyLimit.Adaptive"/> limit for this call. Pass one
    /// <see cref="ConcurrencyLimit"/> instance to several calls to give them one shared budget, or keep a reference
    /// to read <see cref="ConcurrencyLimit.Current"/> and <see cref="ConcurrencyLimit.Peak"/> after the run.
    /// </value>
    public ConcurrencyLimit? Limit { get; init; }

    /// <summary>What happens when a body throws.</summary>
    /// <value>Default <see cref="ErrorMode.FailFast"/>, the behaviour of <c>Parallel.ForEachAsync</c>.</value>
    public ErrorMode Errors { get; init; } = ErrorMode.FailFast;

    /// <summary>Whether <c>FanOutStream</c> yields results in source order rather than completion order.</summary>
    /// <value>
    /// Default <see langword="false"/>: completion order, which never holds a finished result back. When
    /// <see langword="true"/>, a slow item holds back at most a bounded window of later finished results (the
    /// workers wait rather than buffer without bound). <c>FanOutAsync</c> ignores it: its results are always in source order.
    /// </value>
    public bool Ordered { get; init; }

    internal ConcurrencyLimit ResolveLimit() => Limit ?? ConcurrencyLimit.Adaptive();

    internal void Validate()
    {
        if (Errors is not ErrorMode.FailFast and not ErrorMode.RunAll)
        {
            throw new ArgumentOutOfRangeException(nameof(Errors), Errors, "Errors must be FailFast or RunAll.");
        }
    }
}
