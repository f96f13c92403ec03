using System.Runtime.CompilerServices;

namespace FanOut;

/// <summary>
/// The natural first attempts beside <c>Parallel.ForEachAsync</c> and <c>Select</c>: a body that takes only the item
/// (<c>urls.FanOutAsync(16, async url =&gt; await http.GetStringAsync(url))</c>), and a maximum concurrency with options for
/// everything else (<c>urls.FanOutAsync(16, body, new FanOutOptions { Errors = ErrorMode.RunAll })</c>).
/// </summary>
/// <remarks>
/// A body without the token cannot stop early when another item fails or the caller cancels: pass a two-argument body
/// <c>(item, ct) =&gt; ...</c> to the calls inside it when they take a token. Where a method group fits both a one-argument
/// and a two-argument body, the two-argument one is chosen (lower <see cref="OverloadResolutionPriorityAttribute"/> here;
/// C# 12 on net8.0 reports such a call as ambiguous: pass a lambda). As in the other shortcuts, a ValueTask body wins over a
/// Task body on net10.0, and net8.0 has the Task bodies only (see FanOutExtensions.TaskBodies.cs). A <c>default</c> third
/// argument fits both a token and options; it is taken as the token on both targets (net10.0: the options overloads rank
/// lower; C# 12: the token overload needs no default of its own).
/// </remarks>
public static partial class FanOutExtensions
{
#if NET9_0_OR_GREATER
    /// <inheritdoc cref="FanOutAsync{T, TResult}(IEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    [OverloadResolutionPriority(-1)]
    public static Task<TResult[]> FanOutAsync<T, TResult>(
        this IEnumerable<T> source,
        int maxConcurrency,
        Func<T, ValueTask<TResult>> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency), body: WithoutToken(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T}(IEnumerable{T}, Func{T, CancellationToken, ValueTask}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    [OverloadResolutionPriority(-1)]
    public static Task FanOutAsync<T>(
        this IEnumerable<T> source,
        int maxConcurrency,
        Func<T, ValueTask> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency), body: WithoutToken(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T, TResult}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    [OverloadResolutionPriority(-1)]
    public static Task<TResult[]> FanOutAsync<T, TResult>(
        this IAsyncEnumerable<T> source,
        int maxConcurrency,
        Func<T, ValueTask<TResult>> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency), body: WithoutToken(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    [OverloadResolutionPriority(-1)]
    public static Task FanOutAsync<T>(
        this IAsyncEnumerable<T> source,
        int maxConcurrency,
        Func<T, ValueTask> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency), body: WithoutToken(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T, TResult}(IEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1: a fixed limit, with everything else from <paramref name="options"/>.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="options">Error mode, retries, rate limiter, timeouts; its <see cref="FanOutOptions.Limit"/> must be unset (the limit is <paramref name="maxConcurrency"/>).</param>
    /// <param name="cancellationToken">Cancels the run.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    /// <exception cref="ArgumentException"><paramref name="options"/> sets a <see cref="FanOutOptions.Limit"/> too.</exception>
    public static Task<TResult[]> FanOutAsync<T, TResult>(
        this IEnumerable<T> source,
        int maxConcurrency,
        Func<T, CancellationToken, ValueTask<TResult>> body,
        FanOutOptions options,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency, options), body: body, cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T}(IEnumerable{T}, Func{T, CancellationToken, ValueTask}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1: a fixed limit, with everything else from <paramref name="options"/>.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="options">Error mode, retries, rate limiter, timeouts; its <see cref="FanOutOptions.Limit"/> must be unset (the limit is <paramref name="maxConcurrency"/>).</param>
    /// <param name="cancellationToken">Cancels the run.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    /// <exception cref="ArgumentException"><paramref name="options"/> sets a <see cref="FanOutOptions.Limit"/> too.</exception>
    public static Task FanOutAsync<T>(
        this IEnumerable<T> source,
        int maxConcurrency,
        Func<T, CancellationToken, ValueTask> body,
        FanOutOptions options,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency, options), body: body, cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T, TResult}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1: a fixed limit, with everything else from <paramref name="options"/>.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="options">Error mode, retries, rate limiter, timeouts; its <see cref="FanOutOptions.Limit"/> must be unset (the limit is <paramref name="maxConcurrency"/>).</param>
    /// <param name="cancellationToken">Cancels the run.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    /// <exception cref="ArgumentException"><paramref name="options"/> sets a <see cref="FanOutOptions.Limit"/> too.</exception>
    public static Task<TResult[]> FanOutAsync<T, TResult>(
        this IAsyncEnumerable<T> source,
        int maxConcurrency,
        Func<T, CancellationToken, ValueTask<TResult>> body,
        FanOutOptions options,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency, options), body: body, cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1: a fixed limit, with everything else from <paramref name="options"/>.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="options">Error mode, retries, rate limiter, timeouts; its <see cref="FanOutOptions.Limit"/> must be unset (the limit is <paramref name="maxConcurrency"/>).</param>
    /// <param name="cancellationToken">Cancels the run.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    /// <exception cref="ArgumentException"><paramref name="options"/> sets a <see cref="FanOutOptions.Limit"/> too.</exception>
    public static Task FanOutAsync<T>(
        this IAsyncEnumerable<T> source,
        int maxConcurrency,
        Func<T, CancellationToken, ValueTask> body,
        FanOutOptions options,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency, options), body: body, cancellationToken: cancellationToken);

#endif

    /// <inheritdoc cref="FanOutAsync{T, TResult}(IEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    [OverloadResolutionPriority(-2)]
    public static Task<TResult[]> FanOutAsync<T, TResult>(
        this IEnumerable<T> source,
        int maxConcurrency,
        Func<T, Task<TResult>> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency), body: WithoutToken(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T}(IEnumerable{T}, Func{T, CancellationToken, ValueTask}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    [OverloadResolutionPriority(-2)]
    public static Task FanOutAsync<T>(
        this IEnumerable<T> source,
        int maxConcurrency,
        Func<T, Task> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency), body: WithoutToken(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T, TResult}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    [OverloadResolutionPriority(-2)]
    public static Task<TResult[]> FanOutAsync<T, TResult>(
        this IAsyncEnumerable<T> source,
        int maxConcurrency,
        Func<T, Task<TResult>> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency), body: WithoutToken(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    [OverloadResolutionPriority(-2)]
    public static Task FanOutAsync<T>(
        this IAsyncEnumerable<T> source,
        int maxConcurrency,
        Func<T, Task> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency), body: WithoutToken(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T, TResult}(IEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1: a fixed limit, with everything else from <paramref name="options"/>.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="options">Error mode, retries, rate limiter, timeouts; its <see cref="FanOutOptions.Limit"/> must be unset (the limit is <paramref name="maxConcurrency"/>).</param>
    /// <param name="cancellationToken">Cancels the run.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    /// <exception cref="ArgumentException"><paramref name="options"/> sets a <see cref="FanOutOptions.Limit"/> too.</exception>
    [OverloadResolutionPriority(-1)]
    public static Task<TResult[]> FanOutAsync<T, TResult>(
        this IEnumerable<T> source,
        int maxConcurrency,
        Func<T, CancellationToken, Task<TResult>> body,
        FanOutOptions options,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency, options), body: AsValueTask(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T}(IEnumerable{T}, Func{T, CancellationToken, ValueTask}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1: a fixed limit, with everything else from <paramref name="options"/>.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="options">Error mode, retries, rate limiter, timeouts; its <see cref="FanOutOptions.Limit"/> must be unset (the limit is <paramref name="maxConcurrency"/>).</param>
    /// <param name="cancellationToken">Cancels the run.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    /// <exception cref="ArgumentException"><paramref name="options"/> sets a <see cref="FanOutOptions.Limit"/> too.</exception>
    [OverloadResolutionPriority(-1)]
    public static Task FanOutAsync<T>(
        this IEnumerable<T> source,
        int maxConcurrency,
        Func<T, CancellationToken, Task> body,
        FanOutOptions options,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency, options), body: AsValueTask(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T, TResult}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1: a fixed limit, with everything else from <paramref name="options"/>.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="options">Error mode, retries, rate limiter, timeouts; its <see cref="FanOutOptions.Limit"/> must be unset (the limit is <paramref name="maxConcurrency"/>).</param>
    /// <param name="cancellationToken">Cancels the run.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    /// <exception cref="ArgumentException"><paramref name="options"/> sets a <see cref="FanOutOptions.Limit"/> too.</exception>
    [OverloadResolutionPriority(-1)]
    public static Task<TResult[]> FanOutAsync<T, TResult>(
        this IAsyncEnumerable<T> source,
        int maxConcurrency,
        Func<T, CancellationToken, Task<TResult>> body,
        FanOutOptions options,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency, options), body: AsValueTask(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1: a fixed limit, with everything else from <paramref name="options"/>.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="options">Error mode, retries, rate limiter, timeouts; its <see cref="FanOutOptions.Limit"/> must be unset (the limit is <paramref name="maxConcurrency"/>).</param>
    /// <param name="cancellationToken">Cancels the run.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    /// <exception cref="ArgumentException"><paramref name="options"/> sets a <see cref="FanOutOptions.Limit"/> too.</exception>
    [OverloadResolutionPriority(-1)]
    public static Task FanOutAsync<T>(
        this IAsyncEnumerable<T> source,
        int maxConcurrency,
        Func<T, CancellationToken, Task> body,
        FanOutOptions options,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency, options), body: AsValueTask(source, body), cancellationToken: cancellationToken);

    /// <summary>Options for a fixed limit of <paramref name="maxConcurrency"/> and everything else from <paramref name="options"/>.</summary>
    private static FanOutOptions Bounded(object source, int maxConcurrency, FanOutOptions options)
    {
        var bounded = Bounded(source, maxConcurrency);
        ArgumentNullException.ThrowIfNull(options);
        if (options.Limit is not null)
        {
            throw new ArgumentException(
                "options.Limit is set as well as maxConcurrency; pass the limit once: FanOutAsync(8, body, options) or options.Limit = ConcurrencyLimit.Fixed(8).",
                nameof(options));
        }

        return options with { Limit = bounded.Limit };
    }

#if NET9_0_OR_GREATER
    // Issue 38 part 5: a one-argument body in every family and limit shape (FanOutAsync without a limit and with a limit and
    // options; FanOutStream and FanOutOutcomes without a limit and with one). Priorities: ValueTask over Task, a two-argument
    // body over a one-argument one (a method group that fits both), and (maxConcurrency, body) over (maxConcurrency, body,
    // options) for a `default` third argument.
    /// <inheritdoc cref="FanOutAsync{T, TResult}(IEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="options">Limit, error mode; <see langword="null"/> for the defaults.</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    [OverloadResolutionPriority(-1)]
    public static Task<TResult[]> FanOutAsync<T, TResult>(
        this IEnumerable<T> source,
        Func<T, ValueTask<TResult>> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(WithoutToken(source, body), options, cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T, TResult}(IEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="options">Limit, error mode; <see langword="null"/> for the defaults.</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    [OverloadResolutionPriority(-2)]
    public static Task<TResult[]> FanOutAsync<T, TResult>(
        this IEnumerable<T> source,
        Func<T, Task<TResult>> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(WithoutToken(source, body), options, cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T, TResult}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="options">Limit, error mode; <see langword="null"/> for the defaults.</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    [OverloadResolutionPriority(-1)]
    public static Task<TResult[]> FanOutAsync<T, TResult>(
        this IAsyncEnumerable<T> source,
        Func<T, ValueTask<TResult>> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(WithoutToken(source, body), options, cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T, TResult}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="options">Limit, error mode; <see langword="null"/> for the defaults.</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    [OverloadResolutionPriority(-2)]
    public static Task<TResult[]> FanOutAsync<T, TResult>(
        this IAsyncEnumerable<T> source,
        Func<T, Task<TResult>> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(WithoutToken(source, body), options, cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T, TResult}(IEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1: a fixed limit, with everything else from <paramref name="options"/>.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="options">Error mode, retries, rate limiter, timeouts; its <see cref="FanOutOptions.Limit"/> must be unset (the limit is <paramref name="maxConcurrency"/>).</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    /// <exception cref="ArgumentException"><paramref name="options"/> sets a <see cref="FanOutOptions.Limit"/> too.</exception>
    [OverloadResolutionPriority(-2)]
    public static Task<TResult[]> FanOutAsync<T, TResult>(
        this IEnumerable<T> source,
        int maxConcurrency,
        Func<T, ValueTask<TResult>> body,
        FanOutOptions options,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency, options), body: WithoutToken(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T, TResult}(IEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1: a fixed limit, with everything else from <paramref name="options"/>.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="options">Error mode, retries, rate limiter, timeouts; its <see cref="FanOutOptions.Limit"/> must be unset (the limit is <paramref name="maxConcurrency"/>).</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    /// <exception cref="ArgumentException"><paramref name="options"/> sets a <see cref="FanOutOptions.Limit"/> too.</exception>
    [OverloadResolutionPriority(-3)]
    public static Task<TResult[]> FanOutAsync<T, TResult>(
        this IEnumerable<T> source,
        int maxConcurrency,
        Func<T, Task<TResult>> body,
        FanOutOptions options,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency, options), body: WithoutToken(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T, TResult}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1: a fixed limit, with everything else from <paramref name="options"/>.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="options">Error mode, retries, rate limiter, timeouts; its <see cref="FanOutOptions.Limit"/> must be unset (the limit is <paramref name="maxConcurrency"/>).</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    /// <exception cref="ArgumentException"><paramref name="options"/> sets a <see cref="FanOutOptions.Limit"/> too.</exception>
    [OverloadResolutionPriority(-2)]
    public static Task<TResult[]> FanOutAsync<T, TResult>(
        this IAsyncEnumerable<T> source,
        int maxConcurrency,
        Func<T, ValueTask<TResult>> body,
        FanOutOptions options,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency, options), body: WithoutToken(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T, TResult}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1: a fixed limit, with everything else from <paramref name="options"/>.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="options">Error mode, retries, rate limiter, timeouts; its <see cref="FanOutOptions.Limit"/> must be unset (the limit is <paramref name="maxConcurrency"/>).</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    /// <exception cref="ArgumentException"><paramref name="options"/> sets a <see cref="FanOutOptions.Limit"/> too.</exception>
    [OverloadResolutionPriority(-3)]
    public static Task<TResult[]> FanOutAsync<T, TResult>(
        this IAsyncEnumerable<T> source,
        int maxConcurrency,
        Func<T, Task<TResult>> body,
        FanOutOptions options,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency, options), body: WithoutToken(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T}(IEnumerable{T}, Func{T, CancellationToken, ValueTask}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="options">Limit, error mode; <see langword="null"/> for the defaults.</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    [OverloadResolutionPriority(-1)]
    public static Task FanOutAsync<T>(
        this IEnumerable<T> source,
        Func<T, ValueTask> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(WithoutToken(source, body), options, cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T}(IEnumerable{T}, Func{T, CancellationToken, ValueTask}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="options">Limit, error mode; <see langword="null"/> for the defaults.</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    [OverloadResolutionPriority(-2)]
    public static Task FanOutAsync<T>(
        this IEnumerable<T> source,
        Func<T, Task> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(WithoutToken(source, body), options, cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="options">Limit, error mode; <see langword="null"/> for the defaults.</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    [OverloadResolutionPriority(-1)]
    public static Task FanOutAsync<T>(
        this IAsyncEnumerable<T> source,
        Func<T, ValueTask> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(WithoutToken(source, body), options, cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="options">Limit, error mode; <see langword="null"/> for the defaults.</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    [OverloadResolutionPriority(-2)]
    public static Task FanOutAsync<T>(
        this IAsyncEnumerable<T> source,
        Func<T, Task> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(WithoutToken(source, body), options, cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T}(IEnumerable{T}, Func{T, CancellationToken, ValueTask}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1: a fixed limit, with everything else from <paramref name="options"/>.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="options">Error mode, retries, rate limiter, timeouts; its <see cref="FanOutOptions.Limit"/> must be unset (the limit is <paramref name="maxConcurrency"/>).</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    /// <exception cref="ArgumentException"><paramref name="options"/> sets a <see cref="FanOutOptions.Limit"/> too.</exception>
    [OverloadResolutionPriority(-2)]
    public static Task FanOutAsync<T>(
        this IEnumerable<T> source,
        int maxConcurrency,
        Func<T, ValueTask> body,
        FanOutOptions options,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency, options), body: WithoutToken(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T}(IEnumerable{T}, Func{T, CancellationToken, ValueTask}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1: a fixed limit, with everything else from <paramref name="options"/>.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="options">Error mode, retries, rate limiter, timeouts; its <see cref="FanOutOptions.Limit"/> must be unset (the limit is <paramref name="maxConcurrency"/>).</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    /// <exception cref="ArgumentException"><paramref name="options"/> sets a <see cref="FanOutOptions.Limit"/> too.</exception>
    [OverloadResolutionPriority(-3)]
    public static Task FanOutAsync<T>(
        this IEnumerable<T> source,
        int maxConcurrency,
        Func<T, Task> body,
        FanOutOptions options,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency, options), body: WithoutToken(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1: a fixed limit, with everything else from <paramref name="options"/>.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="options">Error mode, retries, rate limiter, timeouts; its <see cref="FanOutOptions.Limit"/> must be unset (the limit is <paramref name="maxConcurrency"/>).</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    /// <exception cref="ArgumentException"><paramref name="options"/> sets a <see cref="FanOutOptions.Limit"/> too.</exception>
    [OverloadResolutionPriority(-2)]
    public static Task FanOutAsync<T>(
        this IAsyncEnumerable<T> source,
        int maxConcurrency,
        Func<T, ValueTask> body,
        FanOutOptions options,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency, options), body: WithoutToken(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1: a fixed limit, with everything else from <paramref name="options"/>.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="options">Error mode, retries, rate limiter, timeouts; its <see cref="FanOutOptions.Limit"/> must be unset (the limit is <paramref name="maxConcurrency"/>).</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    /// <exception cref="ArgumentException"><paramref name="options"/> sets a <see cref="FanOutOptions.Limit"/> too.</exception>
    [OverloadResolutionPriority(-3)]
    public static Task FanOutAsync<T>(
        this IAsyncEnumerable<T> source,
        int maxConcurrency,
        Func<T, Task> body,
        FanOutOptions options,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency, options), body: WithoutToken(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutStream{T, TResult}(IEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="options">Limit, error mode; <see langword="null"/> for the defaults.</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    [OverloadResolutionPriority(-1)]
    public static IAsyncEnumerable<TResult> FanOutStream<T, TResult>(
        this IEnumerable<T> source,
        Func<T, ValueTask<TResult>> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default) =>
        source.FanOutStream(WithoutToken(source, body), options, cancellationToken);

    /// <inheritdoc cref="FanOutStream{T, TResult}(IEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="options">Limit, error mode; <see langword="null"/> for the defaults.</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    [OverloadResolutionPriority(-2)]
    public static IAsyncEnumerable<TResult> FanOutStream<T, TResult>(
        this IEnumerable<T> source,
        Func<T, Task<TResult>> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default) =>
        source.FanOutStream(WithoutToken(source, body), options, cancellationToken);

    /// <inheritdoc cref="FanOutStream{T, TResult}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="options">Limit, error mode; <see langword="null"/> for the defaults.</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    [OverloadResolutionPriority(-1)]
    public static IAsyncEnumerable<TResult> FanOutStream<T, TResult>(
        this IAsyncEnumerable<T> source,
        Func<T, ValueTask<TResult>> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default) =>
        source.FanOutStream(WithoutToken(source, body), options, cancellationToken);

    /// <inheritdoc cref="FanOutStream{T, TResult}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="options">Limit, error mode; <see langword="null"/> for the defaults.</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    [OverloadResolutionPriority(-2)]
    public static IAsyncEnumerable<TResult> FanOutStream<T, TResult>(
        this IAsyncEnumerable<T> source,
        Func<T, Task<TResult>> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default) =>
        source.FanOutStream(WithoutToken(source, body), options, cancellationToken);

    /// <inheritdoc cref="FanOutStream{T, TResult}(IEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    [OverloadResolutionPriority(-1)]
    public static IAsyncEnumerable<TResult> FanOutStream<T, TResult>(
        this IEnumerable<T> source,
        int maxConcurrency,
        Func<T, ValueTask<TResult>> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutStream(options: Bounded(source, maxConcurrency), body: WithoutToken(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutStream{T, TResult}(IEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    [OverloadResolutionPriority(-2)]
    public static IAsyncEnumerable<TResult> FanOutStream<T, TResult>(
        this IEnumerable<T> source,
        int maxConcurrency,
        Func<T, Task<TResult>> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutStream(options: Bounded(source, maxConcurrency), body: WithoutToken(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutStream{T, TResult}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    [OverloadResolutionPriority(-1)]
    public static IAsyncEnumerable<TResult> FanOutStream<T, TResult>(
        this IAsyncEnumerable<T> source,
        int maxConcurrency,
        Func<T, ValueTask<TResult>> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutStream(options: Bounded(source, maxConcurrency), body: WithoutToken(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutStream{T, TResult}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    [OverloadResolutionPriority(-2)]
    public static IAsyncEnumerable<TResult> FanOutStream<T, TResult>(
        this IAsyncEnumerable<T> source,
        int maxConcurrency,
        Func<T, Task<TResult>> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutStream(options: Bounded(source, maxConcurrency), body: WithoutToken(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutOutcomes{T, TResult}(IEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="options">Limit, error mode; <see langword="null"/> for the defaults.</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    [OverloadResolutionPriority(-1)]
    public static IAsyncEnumerable<FanOutOutcome<TResult>> FanOutOutcomes<T, TResult>(
        this IEnumerable<T> source,
        Func<T, ValueTask<TResult>> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default) =>
        source.FanOutOutcomes(WithoutToken(source, body), options, cancellationToken);

    /// <inheritdoc cref="FanOutOutcomes{T, TResult}(IEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="options">Limit, error mode; <see langword="null"/> for the defaults.</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    [OverloadResolutionPriority(-2)]
    public static IAsyncEnumerable<FanOutOutcome<TResult>> FanOutOutcomes<T, TResult>(
        this IEnumerable<T> source,
        Func<T, Task<TResult>> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default) =>
        source.FanOutOutcomes(WithoutToken(source, body), options, cancellationToken);

    /// <inheritdoc cref="FanOutOutcomes{T, TResult}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="options">Limit, error mode; <see langword="null"/> for the defaults.</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    [OverloadResolutionPriority(-1)]
    public static IAsyncEnumerable<FanOutOutcome<TResult>> FanOutOutcomes<T, TResult>(
        this IAsyncEnumerable<T> source,
        Func<T, ValueTask<TResult>> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default) =>
        source.FanOutOutcomes(WithoutToken(source, body), options, cancellationToken);

    /// <inheritdoc cref="FanOutOutcomes{T, TResult}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="options">Limit, error mode; <see langword="null"/> for the defaults.</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    [OverloadResolutionPriority(-2)]
    public static IAsyncEnumerable<FanOutOutcome<TResult>> FanOutOutcomes<T, TResult>(
        this IAsyncEnumerable<T> source,
        Func<T, Task<TResult>> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default) =>
        source.FanOutOutcomes(WithoutToken(source, body), options, cancellationToken);

    /// <inheritdoc cref="FanOutOutcomes{T, TResult}(IEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    [OverloadResolutionPriority(-1)]
    public static IAsyncEnumerable<FanOutOutcome<TResult>> FanOutOutcomes<T, TResult>(
        this IEnumerable<T> source,
        int maxConcurrency,
        Func<T, ValueTask<TResult>> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutOutcomes(options: Bounded(source, maxConcurrency), body: WithoutToken(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutOutcomes{T, TResult}(IEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    [OverloadResolutionPriority(-2)]
    public static IAsyncEnumerable<FanOutOutcome<TResult>> FanOutOutcomes<T, TResult>(
        this IEnumerable<T> source,
        int maxConcurrency,
        Func<T, Task<TResult>> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutOutcomes(options: Bounded(source, maxConcurrency), body: WithoutToken(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutOutcomes{T, TResult}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    [OverloadResolutionPriority(-1)]
    public static IAsyncEnumerable<FanOutOutcome<TResult>> FanOutOutcomes<T, TResult>(
        this IAsyncEnumerable<T> source,
        int maxConcurrency,
        Func<T, ValueTask<TResult>> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutOutcomes(options: Bounded(source, maxConcurrency), body: WithoutToken(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutOutcomes{T, TResult}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item. It gets no token: it runs to its end even after a failure or a cancellation (take <c>(item, ct)</c> to stop early).</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    [OverloadResolutionPriority(-2)]
    public static IAsyncEnumerable<FanOutOutcome<TResult>> FanOutOutcomes<T, TResult>(
        this IAsyncEnumerable<T> source,
        int maxConcurrency,
        Func<T, Task<TResult>> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutOutcomes(options: Bounded(source, maxConcurrency), body: WithoutToken(source, body), cancellationToken: cancellationToken);
#endif

#if NET9_0_OR_GREATER
    /// <summary>A one-argument ValueTask body as the two-argument body the runs take (the token is not passed on).</summary>
    /// <param name="source">Checked first, as the primary overloads do.</param>
    /// <param name="body">The body to wrap.</param>
    private static Func<T, CancellationToken, ValueTask<TResult>> WithoutToken<T, TResult>(object source, Func<T, ValueTask<TResult>> body)
    {
        ArgumentNullException.ThrowIfNull(source);
        ArgumentNullException.ThrowIfNull(body);
        return (item, _) => body(item);
    }

    /// <inheritdoc cref="WithoutToken{T, TResult}(object, Func{T, ValueTask{TResult}})"/>
    private static Func<T, CancellationToken, ValueTask> WithoutToken<T>(object source, Func<T, ValueTask> body)
    {
        ArgumentNullException.ThrowIfNull(source);
        ArgumentNullException.ThrowIfNull(body);
        return (item, _) => body(item);
    }
#endif

    /// <summary>A one-argument Task body as the two-argument ValueTask body the runs take (the token is not passed on).</summary>
    /// <param name="source">Checked first, as the primary overloads do.</param>
    /// <param name="body">The body to wrap.</param>
    private static Func<T, CancellationToken, ValueTask<TResult>> WithoutToken<T, TResult>(object source, Func<T, Task<TResult>> body)
    {
        ArgumentNullException.ThrowIfNull(source);
        ArgumentNullException.ThrowIfNull(body);
        return (item, _) => new ValueTask<TResult>(body(item));
    }

    /// <inheritdoc cref="WithoutToken{T, TResult}(object, Func{T, Task{TResult}})"/>
    private static Func<T, CancellationToken, ValueTask> WithoutToken<T>(object source, Func<T, Task> body)
    {
        ArgumentNullException.ThrowIfNull(source);
        ArgumentNullException.ThrowIfNull(body);
        return (item, _) => new ValueTask(body(item));
    }
}
