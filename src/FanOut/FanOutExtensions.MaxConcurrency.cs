using System.Runtime.CompilerServices;

namespace FanOut;

/// <summary>
/// The overloads that take a plain maximum concurrency instead of options, in the shape of
/// <c>Parallel.ForEachAsync(source, options, body)</c>: <c>await items.FanOutAsync(8, body)</c> runs at most 8 bodies at once
/// (<see cref="ConcurrencyLimit.Fixed"/>, a fresh limit per call, FailFast; a fixed limit never re-runs an item).
/// </summary>
/// <remarks>
/// The ValueTask bodies here are net10.0 only: C# 12, net8.0's default, cannot choose between a ValueTask and a Task body
/// for an <see langword="async"/> lambda (it ignores <see cref="OverloadResolutionPriorityAttribute"/>), and on net8.0 the
/// shortcut takes the Task body, which every async lambda and the README's <c>(url, ct) =&gt; http.GetStringAsync(url, ct)</c>
/// fit (FanOutExtensions.TaskBodies.cs).
/// </remarks>
public static partial class FanOutExtensions
{
#if NET9_0_OR_GREATER
    /// <inheritdoc cref="FanOutAsync{T, TResult}(IEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="cancellationToken">Cancels the run.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    [OverloadResolutionPriority(1)]
    public static Task<TResult[]> FanOutAsync<T, TResult>(
        this IEnumerable<T> source,
        int maxConcurrency,
        Func<T, CancellationToken, ValueTask<TResult>> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency), body: body, cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T, TResult}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="cancellationToken">Cancels the run.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    [OverloadResolutionPriority(1)]
    public static Task<TResult[]> FanOutAsync<T, TResult>(
        this IAsyncEnumerable<T> source,
        int maxConcurrency,
        Func<T, CancellationToken, ValueTask<TResult>> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency), body: body, cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T}(IEnumerable{T}, Func{T, CancellationToken, ValueTask}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="cancellationToken">Cancels the run.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    [OverloadResolutionPriority(1)]
    public static Task FanOutAsync<T>(
        this IEnumerable<T> source,
        int maxConcurrency,
        Func<T, CancellationToken, ValueTask> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency), body: body, cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="cancellationToken">Cancels the run.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    [OverloadResolutionPriority(1)]
    public static Task FanOutAsync<T>(
        this IAsyncEnumerable<T> source,
        int maxConcurrency,
        Func<T, CancellationToken, ValueTask> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency), body: body, cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutStream{T, TResult}(IEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="cancellationToken">Cancels the run.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    [OverloadResolutionPriority(1)]
    public static IAsyncEnumerable<TResult> FanOutStream<T, TResult>(
        this IEnumerable<T> source,
        int maxConcurrency,
        Func<T, CancellationToken, ValueTask<TResult>> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutStream(options: Bounded(source, maxConcurrency), body: body, cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutStream{T, TResult}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="cancellationToken">Cancels the run.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    [OverloadResolutionPriority(1)]
    public static IAsyncEnumerable<TResult> FanOutStream<T, TResult>(
        this IAsyncEnumerable<T> source,
        int maxConcurrency,
        Func<T, CancellationToken, ValueTask<TResult>> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutStream(options: Bounded(source, maxConcurrency), body: body, cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutOutcomes{T, TResult}(IEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="cancellationToken">Cancels the run.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    [OverloadResolutionPriority(1)]
    public static IAsyncEnumerable<FanOutOutcome<TResult>> FanOutOutcomes<T, TResult>(
        this IEnumerable<T> source,
        int maxConcurrency,
        Func<T, CancellationToken, ValueTask<TResult>> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutOutcomes(options: Bounded(source, maxConcurrency), body: body, cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutOutcomes{T, TResult}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="cancellationToken">Cancels the run.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    [OverloadResolutionPriority(1)]
    public static IAsyncEnumerable<FanOutOutcome<TResult>> FanOutOutcomes<T, TResult>(
        this IAsyncEnumerable<T> source,
        int maxConcurrency,
        Func<T, CancellationToken, ValueTask<TResult>> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutOutcomes(options: Bounded(source, maxConcurrency), body: body, cancellationToken: cancellationToken);
#endif

    /// <summary>Options for a fixed limit of <paramref name="maxConcurrency"/>, after checking the source as the primary overloads do.</summary>
    private static FanOutOptions Bounded(object source, int maxConcurrency)
    {
        ArgumentNullException.ThrowIfNull(source);
        if (maxConcurrency < 1)
        {
            throw new ArgumentOutOfRangeException(
                nameof(maxConcurrency),
                maxConcurrency,
                "maxConcurrency must be at least 1; for no limit pass new FanOutOptions { Limit = ConcurrencyLimit.Unbounded }.");
        }

        return new FanOutOptions { Limit = ConcurrencyLimit.Fixed(maxConcurrency) };
    }
}
