namespace FanOut;

/// <summary>The overloads whose bodies return <see cref="Task"/>: the natural first attempt, <c>(u, ct) =&gt; http.GetStringAsync(u, ct)</c>.</summary>
/// <remarks>
/// An <see langword="async"/> lambda fits both a Task and a ValueTask body; C# 13 and later pick the ValueTask overload (its
/// <see cref="System.Runtime.CompilerServices.OverloadResolutionPriorityAttribute"/>), but C# 12, the default for net8.0
/// projects, reports the call as ambiguous. So each shape has one body type on net8.0: the options overloads take ValueTask
/// bodies (the Task ones here are net10.0 only), the <c>maxConcurrency</c> shortcuts take Task bodies (their ValueTask
/// twins are net10.0 only), which makes the README's <c>urls.FanOutAsync(8, (url, ct) =&gt; http.GetStringAsync(url, ct))</c>
/// compile on both.
/// </remarks>
public static partial class FanOutExtensions
{
#if NET9_0_OR_GREATER
    /// <inheritdoc cref="FanOutAsync{T, TResult}(IEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    public static Task<TResult[]> FanOutAsync<T, TResult>(
        this IEnumerable<T> source,
        Func<T, CancellationToken, Task<TResult>> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(AsValueTask(source, body), options, cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T, TResult}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    public static Task<TResult[]> FanOutAsync<T, TResult>(
        this IAsyncEnumerable<T> source,
        Func<T, CancellationToken, Task<TResult>> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(AsValueTask(source, body), options, cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T}(IEnumerable{T}, Func{T, CancellationToken, ValueTask}, FanOutOptions, CancellationToken)"/>
    public static Task FanOutAsync<T>(
        this IEnumerable<T> source,
        Func<T, CancellationToken, Task> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(AsValueTask(source, body), options, cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask}, FanOutOptions, CancellationToken)"/>
    public static Task FanOutAsync<T>(
        this IAsyncEnumerable<T> source,
        Func<T, CancellationToken, Task> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(AsValueTask(source, body), options, cancellationToken);

    /// <inheritdoc cref="FanOutStream{T, TResult}(IEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    public static IAsyncEnumerable<TResult> FanOutStream<T, TResult>(
        this IEnumerable<T> source,
        Func<T, CancellationToken, Task<TResult>> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default) =>
        source.FanOutStream(AsValueTask(source, body), options, cancellationToken);

    /// <inheritdoc cref="FanOutStream{T, TResult}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    public static IAsyncEnumerable<TResult> FanOutStream<T, TResult>(
        this IAsyncEnumerable<T> source,
        Func<T, CancellationToken, Task<TResult>> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default) =>
        source.FanOutStream(AsValueTask(source, body), options, cancellationToken);

    /// <inheritdoc cref="FanOutOutcomes{T, TResult}(IEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    public static IAsyncEnumerable<FanOutOutcome<TResult>> FanOutOutcomes<T, TResult>(
        this IEnumerable<T> source,
        Func<T, CancellationToken, Task<TResult>> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default) =>
        source.FanOutOutcomes(AsValueTask(source, body), options, cancellationToken);

    /// <inheritdoc cref="FanOutOutcomes{T, TResult}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    public static IAsyncEnumerable<FanOutOutcome<TResult>> FanOutOutcomes<T, TResult>(
        this IAsyncEnumerable<T> source,
        Func<T, CancellationToken, Task<TResult>> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default) =>
        source.FanOutOutcomes(AsValueTask(source, body), options, cancellationToken);
#endif

    /// <inheritdoc cref="FanOutAsync{T, TResult}(IEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="cancellationToken">Cancels the run.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    public static Task<TResult[]> FanOutAsync<T, TResult>(
        this IEnumerable<T> source,
        int maxConcurrency,
        Func<T, CancellationToken, Task<TResult>> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency), body: AsValueTask(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T, TResult}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="cancellationToken">Cancels the run.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    public static Task<TResult[]> FanOutAsync<T, TResult>(
        this IAsyncEnumerable<T> source,
        int maxConcurrency,
        Func<T, CancellationToken, Task<TResult>> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency), body: AsValueTask(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T}(IEnumerable{T}, Func{T, CancellationToken, ValueTask}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="cancellationToken">Cancels the run.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    public static Task FanOutAsync<T>(
        this IEnumerable<T> source,
        int maxConcurrency,
        Func<T, CancellationToken, Task> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency), body: AsValueTask(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutAsync{T}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="cancellationToken">Cancels the run.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    public static Task FanOutAsync<T>(
        this IAsyncEnumerable<T> source,
        int maxConcurrency,
        Func<T, CancellationToken, Task> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutAsync(options: Bounded(source, maxConcurrency), body: AsValueTask(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutStream{T, TResult}(IEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="cancellationToken">Cancels the run.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    public static IAsyncEnumerable<TResult> FanOutStream<T, TResult>(
        this IEnumerable<T> source,
        int maxConcurrency,
        Func<T, CancellationToken, Task<TResult>> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutStream(options: Bounded(source, maxConcurrency), body: AsValueTask(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutStream{T, TResult}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="cancellationToken">Cancels the run.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    public static IAsyncEnumerable<TResult> FanOutStream<T, TResult>(
        this IAsyncEnumerable<T> source,
        int maxConcurrency,
        Func<T, CancellationToken, Task<TResult>> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutStream(options: Bounded(source, maxConcurrency), body: AsValueTask(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutOutcomes{T, TResult}(IEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="cancellationToken">Cancels the run.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    public static IAsyncEnumerable<FanOutOutcome<TResult>> FanOutOutcomes<T, TResult>(
        this IEnumerable<T> source,
        int maxConcurrency,
        Func<T, CancellationToken, Task<TResult>> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutOutcomes(options: Bounded(source, maxConcurrency), body: AsValueTask(source, body), cancellationToken: cancellationToken);

    /// <inheritdoc cref="FanOutOutcomes{T, TResult}(IAsyncEnumerable{T}, Func{T, CancellationToken, ValueTask{TResult}}, FanOutOptions, CancellationToken)"/>
    /// <param name="source">The items.</param>
    /// <param name="maxConcurrency">The most bodies running at once, at least 1.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="cancellationToken">Cancels the run.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is less than 1.</exception>
    public static IAsyncEnumerable<FanOutOutcome<TResult>> FanOutOutcomes<T, TResult>(
        this IAsyncEnumerable<T> source,
        int maxConcurrency,
        Func<T, CancellationToken, Task<TResult>> body,
        CancellationToken cancellationToken = default) =>
        source.FanOutOutcomes(options: Bounded(source, maxConcurrency), body: AsValueTask(source, body), cancellationToken: cancellationToken);

    /// <summary>Wraps a Task body once per call; each item's Task is awaited through a ValueTask, with no allocation of its own.</summary>
    /// <param name="source">Checked first, as the primary overloads do.</param>
    /// <param name="body">The body to wrap.</param>
    private static Func<T, CancellationToken, ValueTask<TResult>> AsValueTask<T, TResult>(object source, Func<T, CancellationToken, Task<TResult>> body)
    {
        ArgumentNullException.ThrowIfNull(source);
        ArgumentNullException.ThrowIfNull(body);
        return (item, cancellationToken) => new ValueTask<TResult>(body(item, cancellationToken));
    }

    /// <inheritdoc cref="AsValueTask{T, TResult}(object, Func{T, CancellationToken, Task{TResult}})"/>
    private static Func<T, CancellationToken, ValueTask> AsValueTask<T>(object source, Func<T, CancellationToken, Task> body)
    {
        ArgumentNullException.ThrowIfNull(source);
        ArgumentNullException.ThrowIfNull(body);
        return (item, cancellationToken) => new ValueTask(body(item, cancellationToken));
    }
}
