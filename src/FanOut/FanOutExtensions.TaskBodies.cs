namespace FanOut;

/// <summary>The overloads whose bodies return <see cref="Task"/>: the natural first attempt, <c>(u, ct) =&gt; http.GetStringAsync(u, ct)</c>.</summary>
public static partial class FanOutExtensions
{
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
