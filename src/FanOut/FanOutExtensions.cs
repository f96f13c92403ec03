using System.Runtime.CompilerServices;

using FanOut.Execution;
using FanOut.Sources;

namespace FanOut;

/// <summary>
/// Bounded fan-out over a sequence: runs a body for every item, at most <see cref="FanOutOptions.Limit"/> at once, and
/// returns the results (<c>FanOutAsync</c>) or yields them as they finish (<c>FanOutStream</c>).
/// </summary>
/// <remarks>
/// Every call returns before any body runs; bodies run on the thread pool, never on the caller's thread. Every body gets
/// the same token, canceled when the caller's token is or (in <see cref="ErrorMode.FailFast"/>) when a body fails. The
/// caller's cancellation wins: the task is canceled, not faulted, even if bodies threw. The source is pulled lazily:
/// item k+1 is taken only when a body can start on it (with every body blocked at a limit of D, exactly D items have been
/// pulled), items start in source order, and the enumerator is always disposed before the task completes. A call on a
/// limit that another call shares may pull one item ahead of its permit (see docs/library.md).
/// <para>
/// Each family has four shapes: a body returning <see cref="ValueTask"/> or <see cref="Task"/> (so
/// <c>urls.FanOutAsync((u, ct) =&gt; http.GetStringAsync(u, ct))</c> returns <c>string[]</c>), with a
/// <see cref="FanOutOptions"/> or with a plain maximum concurrency (<c>items.FanOutAsync(8, body)</c>, the shape of
/// <c>Parallel.ForEachAsync(source, options, body)</c>). Where both body shapes fit (an <see langword="async"/> lambda),
/// the <see cref="ValueTask"/> one is chosen: it allocates nothing for a body that completes synchronously. On net8.0,
/// whose C# 12 cannot choose between the two, each shape has one: ValueTask bodies with options, Task bodies with a
/// maximum concurrency. On net10.0 every family and limit shape also takes a body of the item alone
/// (<c>items.FanOutAsync(async x =&gt; ...)</c>, <c>items.FanOutStream(8, x =&gt; ...)</c>); <c>FanOutAsync</c> also takes a
/// maximum concurrency with options (<c>items.FanOutAsync(8, body, options)</c>).
/// </para>
/// </remarks>
public static partial class FanOutExtensions
{
    /// <summary>Runs <paramref name="body"/> for every item, at most <see cref="FanOutOptions.Limit"/> at once; results in source order.</summary>
    /// <typeparam name="T">The item type.</typeparam>
    /// <typeparam name="TResult">The result type.</typeparam>
    /// <param name="source">The items. Arrays and lists are claimed by index without a lock; other sequences through their enumerator.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="options">Limit, error mode; <see langword="null"/> for a fresh adaptive limit and <see cref="ErrorMode.FailFast"/>. An item whose downstream answered "overloaded" (HTTP 429/503 or an <see cref="OverloadedException"/>) may run again, up to <see cref="FanOutOptions.OverloadRetries"/> times; set it to 0 to never re-run.</param>
    /// <param name="cancellationToken">Cancels the run: no new item starts, bodies see their token canceled, the task ends Canceled.</param>
    /// <returns>
    /// The results, <c>results[i]</c> from the i-th item. Faults with every exception (FailFast) or with a
    /// <see cref="FanOutException{TResult}"/> that keeps the successful results (RunAll).
    /// </returns>
    /// <exception cref="ArgumentNullException"><paramref name="source"/> or <paramref name="body"/> is null.</exception>
    [OverloadResolutionPriority(1)]
    public static Task<TResult[]> FanOutAsync<T, TResult>(
        this IEnumerable<T> source,
        Func<T, CancellationToken, ValueTask<TResult>> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(source);
        return RunResults(() => ItemSource<T>.From(source), body, options, cancellationToken);
    }

    /// <summary>Runs <paramref name="body"/> for every item of an async sequence, at most <see cref="FanOutOptions.Limit"/> at once; results in source order.</summary>
    /// <typeparam name="T">The item type.</typeparam>
    /// <typeparam name="TResult">The result type.</typeparam>
    /// <param name="source">The items; the enumerator gets the run's token and is pulled one MoveNextAsync at a time.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="options">Limit, error mode; <see langword="null"/> for a fresh adaptive limit and <see cref="ErrorMode.FailFast"/>. An item whose downstream answered "overloaded" (HTTP 429/503 or an <see cref="OverloadedException"/>) may run again, up to <see cref="FanOutOptions.OverloadRetries"/> times; set it to 0 to never re-run.</param>
    /// <param name="cancellationToken">Cancels the run.</param>
    /// <returns>The results in source order (see the <see cref="IEnumerable{T}"/> overload for failures).</returns>
    /// <exception cref="ArgumentNullException"><paramref name="source"/> or <paramref name="body"/> is null.</exception>
    [OverloadResolutionPriority(1)]
    public static Task<TResult[]> FanOutAsync<T, TResult>(
        this IAsyncEnumerable<T> source,
        Func<T, CancellationToken, ValueTask<TResult>> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(source);
        return RunResults(() => new AsyncEnumerableSource<T>(source), body, options, cancellationToken);
    }

    /// <summary>Runs <paramref name="body"/> for every item, at most <see cref="FanOutOptions.Limit"/> at once.</summary>
    /// <typeparam name="T">The item type.</typeparam>
    /// <param name="source">The items.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="options">Limit, error mode; <see langword="null"/> for a fresh adaptive limit and <see cref="ErrorMode.FailFast"/>. An item whose downstream answered "overloaded" (HTTP 429/503 or an <see cref="OverloadedException"/>) may run again, up to <see cref="FanOutOptions.OverloadRetries"/> times; set it to 0 to never re-run.</param>
    /// <param name="cancellationToken">Cancels the run.</param>
    /// <returns>A task that completes when every item has run; faults with every exception (FailFast) or a <see cref="FanOutException"/> (RunAll).</returns>
    /// <exception cref="ArgumentNullException"><paramref name="source"/> or <paramref name="body"/> is null.</exception>
    [OverloadResolutionPriority(1)]
    public static Task FanOutAsync<T>(
        this IEnumerable<T> source,
        Func<T, CancellationToken, ValueTask> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(source);
        return RunActions(() => ItemSource<T>.From(source), body, options, cancellationToken);
    }

    /// <summary>Runs <paramref name="body"/> for every item of an async sequence, at most <see cref="FanOutOptions.Limit"/> at once.</summary>
    /// <typeparam name="T">The item type.</typeparam>
    /// <param name="source">The items; the enumerator gets the run's token.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="options">Limit, error mode; <see langword="null"/> for a fresh adaptive limit and <see cref="ErrorMode.FailFast"/>. An item whose downstream answered "overloaded" (HTTP 429/503 or an <see cref="OverloadedException"/>) may run again, up to <see cref="FanOutOptions.OverloadRetries"/> times; set it to 0 to never re-run.</param>
    /// <param name="cancellationToken">Cancels the run.</param>
    /// <returns>A task that completes when every item has run.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="source"/> or <paramref name="body"/> is null.</exception>
    [OverloadResolutionPriority(1)]
    public static Task FanOutAsync<T>(
        this IAsyncEnumerable<T> source,
        Func<T, CancellationToken, ValueTask> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(source);
        return RunActions(() => new AsyncEnumerableSource<T>(source), body, options, cancellationToken);
    }

    /// <summary>
    /// Yields results while later items still run: in completion order, or in source order when <see cref="FanOutOptions.Ordered"/>.
    /// Nothing starts until the stream is enumerated; a consumer that stops early cancels and awaits the items in flight.
    /// </summary>
    /// <typeparam name="T">The item type.</typeparam>
    /// <typeparam name="TResult">The result type.</typeparam>
    /// <param name="source">The items.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="options">Limit, error mode, ordering; <see langword="null"/> for the defaults. An item whose downstream answered "overloaded" (HTTP 429/503 or an <see cref="OverloadedException"/>) may run again, up to <see cref="FanOutOptions.OverloadRetries"/> times; set it to 0 to never re-run.</param>
    /// <param name="cancellationToken">Cancels the run (so does the token given to <c>GetAsyncEnumerator</c>).</param>
    /// <returns>
    /// The results. In FailFast the enumeration throws the first exception after the items in flight finish; in RunAll it
    /// yields every success, then throws a <see cref="FanOutException"/>.
    /// </returns>
    /// <exception cref="ArgumentNullException"><paramref name="source"/> or <paramref name="body"/> is null.</exception>
    [OverloadResolutionPriority(1)]
    public static IAsyncEnumerable<TResult> FanOutStream<T, TResult>(
        this IEnumerable<T> source,
        Func<T, CancellationToken, ValueTask<TResult>> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(source);
        ArgumentNullException.ThrowIfNull(body);
        var resolved = Validated(options);
        return StreamAsync(() => ItemSource<T>.From(source), body, resolved, cancellationToken);
    }

    /// <summary>Yields results of an async sequence's items while later items still run (see the <see cref="IEnumerable{T}"/> overload).</summary>
    /// <typeparam name="T">The item type.</typeparam>
    /// <typeparam name="TResult">The result type.</typeparam>
    /// <param name="source">The items; an endless source runs in bounded memory.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="options">Limit, error mode, ordering; <see langword="null"/> for the defaults. An item whose downstream answered "overloaded" (HTTP 429/503 or an <see cref="OverloadedException"/>) may run again, up to <see cref="FanOutOptions.OverloadRetries"/> times; set it to 0 to never re-run.</param>
    /// <param name="cancellationToken">Cancels the run (so does the token given to <c>GetAsyncEnumerator</c>).</param>
    /// <returns>The results.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="source"/> or <paramref name="body"/> is null.</exception>
    [OverloadResolutionPriority(1)]
    public static IAsyncEnumerable<TResult> FanOutStream<T, TResult>(
        this IAsyncEnumerable<T> source,
        Func<T, CancellationToken, ValueTask<TResult>> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(source);
        ArgumentNullException.ThrowIfNull(body);
        var resolved = Validated(options);
        return StreamAsync(() => new AsyncEnumerableSource<T>(source), body, resolved, cancellationToken);
    }

    /// <summary>
    /// Yields what became of every item, success or failure, with its index, while later items still run: a failure is an
    /// outcome like a success, so the run goes on (whatever <see cref="FanOutOptions.Errors"/> says) and keeps nothing of
    /// it, which is how an endless source with failures runs in bounded memory.
    /// </summary>
    /// <typeparam name="T">The item type.</typeparam>
    /// <typeparam name="TResult">The result type.</typeparam>
    /// <param name="source">The items.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="options">Limit and ordering (completion order unless <see cref="FanOutOptions.Ordered"/>); <see langword="null"/> for the defaults. An item whose downstream answered "overloaded" (HTTP 429/503 or an <see cref="OverloadedException"/>) may run again, up to <see cref="FanOutOptions.OverloadRetries"/> times; set it to 0 to never re-run.</param>
    /// <param name="cancellationToken">Cancels the run (so does the token given to <c>GetAsyncEnumerator</c>).</param>
    /// <returns>One outcome per item that ran. The enumeration throws only what the source threw, or ends canceled.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="source"/> or <paramref name="body"/> is null.</exception>
    [OverloadResolutionPriority(1)]
    public static IAsyncEnumerable<FanOutOutcome<TResult>> FanOutOutcomes<T, TResult>(
        this IEnumerable<T> source,
        Func<T, CancellationToken, ValueTask<TResult>> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(source);
        ArgumentNullException.ThrowIfNull(body);
        var resolved = Validated(options);
        return OutcomesAsync<T, TResult, FanOutOutcome<TResult>, WholeOutcome<TResult>>(() => ItemSource<T>.From(source), body, resolved, yieldFailures: true, cancellationToken);
    }

    /// <summary>Yields what became of every item of an async sequence, success or failure (see the <see cref="IEnumerable{T}"/> overload).</summary>
    /// <typeparam name="T">The item type.</typeparam>
    /// <typeparam name="TResult">The result type.</typeparam>
    /// <param name="source">The items; an endless source runs in bounded memory.</param>
    /// <param name="body">The work for one item; it should observe the token it is given.</param>
    /// <param name="options">Limit and ordering; <see langword="null"/> for the defaults. An item whose downstream answered "overloaded" (HTTP 429/503 or an <see cref="OverloadedException"/>) may run again, up to <see cref="FanOutOptions.OverloadRetries"/> times; set it to 0 to never re-run.</param>
    /// <param name="cancellationToken">Cancels the run (so does the token given to <c>GetAsyncEnumerator</c>).</param>
    /// <returns>One outcome per item that ran.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="source"/> or <paramref name="body"/> is null.</exception>
    [OverloadResolutionPriority(1)]
    public static IAsyncEnumerable<FanOutOutcome<TResult>> FanOutOutcomes<T, TResult>(
        this IAsyncEnumerable<T> source,
        Func<T, CancellationToken, ValueTask<TResult>> body,
        FanOutOptions? options = null,
        CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(source);
        ArgumentNullException.ThrowIfNull(body);
        var resolved = Validated(options);
        return OutcomesAsync<T, TResult, FanOutOutcome<TResult>, WholeOutcome<TResult>>(() => new AsyncEnumerableSource<T>(source), body, resolved, yieldFailures: true, cancellationToken);
    }

    private static FanOutOptions Validated(FanOutOptions? options)
    {
        var resolved = options ?? FanOutOptions.Default;
        resolved.Validate();
        return resolved;
    }

    private static Task<TResult[]> RunResults<T, TResult>(
        Func<ItemSource<T>> sourceFactory, Func<T, CancellationToken, ValueTask<TResult>> body, FanOutOptions? options, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(body);
        var resolved = Validated(options);
        if (cancellationToken.IsCancellationRequested)
        {
            return Task.FromCanceled<TResult[]>(cancellationToken);
        }

        ResultsRun<T, TResult> run;
        try
        {
            // A list's Count (or an allocation for its results) may throw: the source's failures fault the task, as
            // Parallel.ForEachAsync's do; only the argument checks above throw to the caller.
            run = new ResultsRun<T, TResult>(sourceFactory(), body, resolved, cancellationToken);
        }
        catch (Exception e)
        {
            return Task.FromException<TResult[]>(e);
        }

        run.Start();
        return run.Task;
    }

    private static Task RunActions<T>(
        Func<ItemSource<T>> sourceFactory, Func<T, CancellationToken, ValueTask> body, FanOutOptions? options, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(body);
        var resolved = Validated(options);
        if (cancellationToken.IsCancellationRequested)
        {
            return Task.FromCanceled(cancellationToken);
        }

        ActionRun<T> run;
        try
        {
            run = new ActionRun<T>(sourceFactory(), body, resolved, cancellationToken);
        }
        catch (Exception e)
        {
            return Task.FromException(e);
        }

        run.Start();
        return run.Task;
    }

    private static IAsyncEnumerable<TResult> StreamAsync<T, TResult>(
        Func<ItemSource<T>> sourceFactory,
        Func<T, CancellationToken, ValueTask<TResult>> body,
        FanOutOptions options,
        CancellationToken cancellationToken) =>
        OutcomesAsync<T, TResult, TResult, ResultOnly<TResult>>(sourceFactory, body, options, yieldFailures: false, cancellationToken);

    /// <summary>
    /// The one reading loop of every stream, in the iterator the caller enumerates: a nested iterator would add a
    /// MoveNextAsync per item, a large share of a stream's per-item cost; <typeparamref name="TProjection"/> turns an
    /// outcome into what is yielded at no cost (a static call on a struct type argument).
    /// </summary>
    private static async IAsyncEnumerable<TOut> OutcomesAsync<T, TResult, TOut, TProjection>(
        Func<ItemSource<T>> sourceFactory,
        Func<T, CancellationToken, ValueTask<TResult>> body,
        FanOutOptions options,
        bool yieldFailures,
        CancellationToken cancellationToken,
        [EnumeratorCancellation] CancellationToken enumeratorToken = default)
        where TProjection : struct, IOutcomeProjection<TResult, TOut>
    {
        // Either token cancels the run; a linked source only when both can be canceled.
        using var linked = cancellationToken.CanBeCanceled && enumeratorToken.CanBeCanceled
            ? CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, enumeratorToken)
            : null;
        var token = linked?.Token ?? (cancellationToken.CanBeCanceled ? cancellationToken : enumeratorToken);
        token.ThrowIfCancellationRequested();

        var run = new StreamRun<T, TResult>(sourceFactory(), body, options, yieldFailures, token);
        run.Start();
        try
        {
            if (run.Reader is { } reader)
            {
                var spin = default(ReaderSpin);
                while (await reader.WaitToReadAsync().ConfigureAwait(false))
                {
                    do
                    {
                        while (reader.TryRead(out var outcome))
                        {
                            spin.Found();
                            yield return TProjection.Project(outcome);
                        }
                    }
                    while (spin.SpinOnce());
                }
            }
            else
            {
                var ordered = run.Ordered!;
                while (true)
                {
                    if (ordered.TryTake(out var outcome, out var hasValue))
                    {
                        if (hasValue)
                        {
                            yield return TProjection.Project(outcome);
                        }

                        continue;
                    }

                    if (!await ordered.WaitAsync().ConfigureAwait(false))
                    {
                        break;
                    }
                }
            }

            // Every result is out: surface the outcome (canceled, the first FailFast exception, or a FanOutException).
            await run.Completion.ConfigureAwait(false);
        }
        finally
        {
            // A consumer that stopped early (break, exception) leaves workers running: cancel them and wait, so that no
            // body runs after the enumeration is disposed. On a normal end this is a no-op on a completed run.
            if (!run.Completion.IsCompleted)
            {
                run.Abort();
            }

            await run.Completion.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        }
    }
}
