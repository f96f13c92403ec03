using System.Threading.RateLimiting;

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

    /// <summary>
    /// How many times an item whose body failed with an overload signal is run again, when the limit is adaptive: the limit
    /// backs off, the worker gives its permit back, waits (the downstream's retry-after hint when the failure carries one,
    /// else a short jittered exponential backoff) and runs the whole body again, under the same index. Only when the
    /// attempts are exhausted does the item fail, in the caller's <see cref="Errors"/> mode.
    /// </summary>
    /// <value>
    /// Default 8; range 0 (off: an overload fails the item at once, as any failure) to 100. Fixed and unbounded limits
    /// never re-run items. An overload signal (HTTP 429 or 503, an <see cref="OverloadedException"/>, or whatever
    /// <see cref="AdaptiveLimitOptions.IsOverload"/> says) means the downstream said it did not process the item, which is
    /// why running it again is safe. A client-side timeout is not one: it backs the limit off, and the item fails, since
    /// the downstream may have done the work. The unit that runs again is the whole body: a body that made a side-effecting
    /// call before the rejected one repeats it. Keep one downstream call per body, or set 0.
    /// </value>
    public int OverloadRetries { get; init; } = DefaultOverloadRetries;

    /// <summary>Paces item starts: every attempt of every item takes one permit of this limiter before it takes a concurrency permit.</summary>
    /// <value>
    /// Default <see langword="null"/> (no pacing). A <see cref="TokenBucketRateLimiter"/> of R per second plus the
    /// concurrency <see cref="Limit"/> enforces both: at most R starts per second and at most the limit in flight. Share one
    /// limiter between calls for one budget. The lease is held while the body runs and disposed after it. A lease the limiter
    /// refuses (its queue is full) is asked for again after the limiter's retry-after metadata, or a short backoff.
    /// </value>
    public RateLimiter? RateLimiter { get; init; }

    /// <summary>
    /// A deadline for each attempt of an item: the body's token is canceled once it has run this long, and the item fails
    /// with a <see cref="TimeoutException"/> naming its index (its inner exception is what the body threw, typically the
    /// <see cref="OperationCanceledException"/>).
    /// </summary>
    /// <value>
    /// Default <see langword="null"/> (no deadline); <see cref="Timeout.InfiniteTimeSpan"/> also means none. Otherwise greater
    /// than zero and at most 4,294,967,294 ms (about 49.7 days, the longest a timer takes). The clock is the
    /// limit's <see cref="ConcurrencyLimit.TimeProvider"/> (an adaptive limit's <see cref="AdaptiveLimitOptions.TimeProvider"/>).
    /// </value>
    /// <remarks>
    /// <para>
    /// Cooperative, like <see cref="CancellationTokenSource.CancelAfter(TimeSpan)"/>: the body is never abandoned. A body
    /// that ignores its token runs on, and its item fails with the <see cref="TimeoutException"/> only when the body
    /// returns (a result that arrives after the deadline is discarded). Each attempt of an item re-run after an overload
    /// gets a fresh deadline; a rate limiter's wait and the wait before a re-run are not counted.
    /// </para>
    /// <para>
    /// A timed-out item is never run again, whatever <see cref="AdaptiveLimitOptions.IsOverload"/> says: the downstream may
    /// have done the work. An adaptive limit takes the timeout as an overload signal and backs off. The run's own
    /// cancellation (the caller's token, a FailFast failure, a stream's consumer leaving) still surfaces as an
    /// <see cref="OperationCanceledException"/>, not a timeout.
    /// </para>
    /// </remarks>
    public TimeSpan? ItemTimeout { get; init; }

    /// <summary>The longest <see cref="ItemTimeout"/> accepted: 4,294,967,294 ms, the longest a timer takes.</summary>
    internal static readonly TimeSpan MaxItemTimeout = TimeSpan.FromMilliseconds(uint.MaxValue - 1.0);

    /// <summary>The default of <see cref="OverloadRetries"/>.</summary>
    internal const int DefaultOverloadRetries = 8;

    /// <summary>The highest <see cref="OverloadRetries"/> accepts.</summary>
    internal const int MaxOverloadRetries = 100;

    /// <summary>Where an ordered stream reports how far every item succeeded and was consumed (for committing offsets).</summary>
    /// <value>
    /// Default <see langword="null"/>. Needs <see cref="Ordered"/> (<see cref="ArgumentException"/> otherwise); read by
    /// <c>FanOutStream</c> and <c>FanOutOutcomes</c>, ignored by <c>FanOutAsync</c>. The stream resets it when its
    /// enumeration starts and advances it as the consumer moves past each item: see <see cref="FanOut.CommittedPrefix"/>.
    /// </value>
    public CommittedPrefix? CommittedPrefix { get; init; }

    /// <summary><see cref="ItemTimeout"/> as a run uses it: <see cref="Timeout.InfiniteTimeSpan"/> when there is none.</summary>
    internal TimeSpan ResolvedItemTimeout => ItemTimeout ?? Timeout.InfiniteTimeSpan;

    internal ConcurrencyLimit ResolveLimit() => Limit ?? ConcurrencyLimit.Adaptive();

    internal void Validate()
    {
        if (Errors is not ErrorMode.FailFast and not ErrorMode.RunAll)
        {
            throw new ArgumentOutOfRangeException(nameof(Errors), Errors, "Errors must be FailFast or RunAll.");
        }

        if (OverloadRetries is < 0 or > MaxOverloadRetries)
        {
            throw new ArgumentOutOfRangeException(nameof(OverloadRetries), OverloadRetries, $"OverloadRetries must be 0 (off) to {MaxOverloadRetries}.");
        }

        if (CommittedPrefix is not null && !Ordered)
        {
            throw new ArgumentException("CommittedPrefix needs Ordered = true: a prefix of successes is counted in source order.", nameof(CommittedPrefix));
        }

        if (ItemTimeout is { } timeout && timeout != Timeout.InfiniteTimeSpan && (timeout <= TimeSpan.Zero || timeout > MaxItemTimeout))
        {
            throw new ArgumentOutOfRangeException(
                nameof(ItemTimeout),
                timeout,
                $"ItemTimeout must be greater than zero and at most {MaxItemTimeout}, or null or Timeout.InfiniteTimeSpan for none.");
        }
    }
}
