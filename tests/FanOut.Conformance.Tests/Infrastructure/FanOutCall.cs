namespace FanOut.Conformance.Tests.Infrastructure;

/// <summary>The ways to call FanOut: each test that holds for all of them runs once per API.</summary>
public enum Api
{
    /// <summary><c>FanOutAsync</c> with a body that returns nothing (the Parallel.ForEachAsync shape).</summary>
    Actions,

    /// <summary><c>FanOutAsync</c> with a body that returns a result: a <c>Task&lt;TResult[]&gt;</c>.</summary>
    Results,

    /// <summary><c>FanOutStream</c> in completion order.</summary>
    Stream,

    /// <summary><c>FanOutStream</c> with <see cref="FanOutOptions.Ordered"/>.</summary>
    OrderedStream,

    /// <summary><c>FanOutOutcomes</c> (completion order).</summary>
    Outcomes,
}

/// <summary>A body as every API sees it: the item in, a result out (dropped by <see cref="Api.Actions"/>).</summary>
public delegate ValueTask<int> Body(int item, CancellationToken cancellationToken);

/// <summary>
/// One started FanOut call, whatever its API: <see cref="Completion"/> is the call's own task for <c>FanOutAsync</c>
/// (faults with every exception, cancels with the caller's token), and for a stream the task of a consumer that reads it to
/// the end (faults with what the enumeration threw, cancels when it threw an <see cref="OperationCanceledException"/>).
/// </summary>
public sealed class FanOutCall
{
    private readonly List<int> _streamed = [];
    private readonly List<FanOutOutcome<int>> _outcomes = [];
    private Task<int[]>? _results;

    private FanOutCall(Api api) => Api = api;

    public Api Api { get; }

    /// <summary>True for the two <c>FanOutAsync</c> APIs, whose task is FanOut's own.</summary>
    public bool ReturnsTask => Api is Api.Actions or Api.Results;

    /// <summary>True for the APIs that yield results as they finish.</summary>
    public bool IsStream => !ReturnsTask;

    /// <summary>The call's task, or the consumer's task for a stream.</summary>
    public Task Completion { get; private set; } = Task.CompletedTask;

    /// <summary>Results in the order the API gives them (source order for <see cref="Api.Results"/>); empty for <see cref="Api.Actions"/>.</summary>
    public IReadOnlyList<int> Results => Api switch
    {
        Api.Actions => [],
        Api.Results => _results!.IsCompletedSuccessfully ? _results.GetAwaiter().GetResult() : [],
        Api.Outcomes => _outcomes.Where(o => o.Succeeded).Select(o => o.Result).ToList(),
        _ => _streamed,
    };

    /// <summary>What <see cref="Api.Outcomes"/> yielded, in order.</summary>
    public IReadOnlyList<FanOutOutcome<int>> Outcomes => _outcomes;

    /// <summary>Starts the call (for a stream: calls FanOutStream/FanOutOutcomes and starts a consumer that reads it all).</summary>
    public static FanOutCall Start(Api api, ProbeSource source, Body body, FanOutOptions? options = null, CancellationToken cancellationToken = default) =>
        Start(api, source.Enumerable, source.AsyncEnumerable, body, options, cancellationToken);

    /// <summary>Starts the call over a hand-written async sequence.</summary>
    public static FanOutCall Start(Api api, IAsyncEnumerable<int> source, Body body, FanOutOptions? options = null, CancellationToken cancellationToken = default) =>
        Start(api, null, source, body, options, cancellationToken);

    private static FanOutCall Start(Api api, IEnumerable<int>? sync, IAsyncEnumerable<int>? async, Body body, FanOutOptions? options, CancellationToken cancellationToken)
    {
        var call = new FanOutCall(api);
        switch (api)
        {
            case Api.Actions:
                Func<int, CancellationToken, ValueTask> action = (item, token) => Drop(body(item, token));
                call.Completion = async is not null
                    ? async.FanOutAsync(action, options, cancellationToken)
                    : sync!.FanOutAsync(action, options, cancellationToken);
                break;

            case Api.Results:
                Func<int, CancellationToken, ValueTask<int>> func = body.Invoke;
                call._results = async is not null
                    ? async.FanOutAsync(func, options, cancellationToken)
                    : sync!.FanOutAsync(func, options, cancellationToken);
                call.Completion = call._results;
                break;

            case Api.Stream:
            case Api.OrderedStream:
                var streamOptions = (options ?? new FanOutOptions()) with { Ordered = api == Api.OrderedStream };
                var stream = async is not null
                    ? async.FanOutStream<int, int>(body.Invoke, streamOptions, cancellationToken)
                    : sync!.FanOutStream<int, int>(body.Invoke, streamOptions, cancellationToken);
                call.Completion = ConsumeAsync(stream, call._streamed);
                break;

            case Api.Outcomes:
                var outcomes = async is not null
                    ? async.FanOutOutcomes<int, int>(body.Invoke, options, cancellationToken)
                    : sync!.FanOutOutcomes<int, int>(body.Invoke, options, cancellationToken);
                call.Completion = ConsumeAsync(outcomes, call._outcomes);
                break;

            default:
                throw new ArgumentOutOfRangeException(nameof(api), api, null);
        }

        return call;
    }

    /// <summary>Waits (at most <see cref="Wait.Timeout"/>) for the call to end, however it ends.</summary>
    public Task SettleAsync() => Completion.SettleAsync();

    /// <summary>
    /// The exceptions the call ended with: the faulted task's for FanOutAsync (every one of them), the single exception the
    /// enumeration threw for a stream; empty when it succeeded. Waits for the end first.
    /// </summary>
    public async Task<IReadOnlyList<Exception>> ExceptionsAsync()
    {
        await SettleAsync();
        if (Completion.IsCanceled)
        {
            try
            {
                await Completion;
            }
            catch (OperationCanceledException e)
            {
                return [e];
            }
        }

        return Completion.Exception?.InnerExceptions ?? (IReadOnlyList<Exception>)[];
    }

    /// <summary>Asserts that the call ended canceled by <paramref name="token"/>, not faulted, and returns the exception seen.</summary>
    public async Task<OperationCanceledException> AssertCanceledAsync(CancellationToken token)
    {
        await SettleAsync();
        Assert.True(Completion.IsCanceled, $"{Api}: expected Canceled, was {Completion.Status}: {Completion.Exception?.InnerException}");
        var oce = await Assert.ThrowsAnyAsync<OperationCanceledException>(() => Completion);
        Assert.Equal(token, oce.CancellationToken);
        return oce;
    }

    /// <summary>Asserts that the call ended faulted (for a stream: the enumeration threw something other than a cancellation).</summary>
    public async Task<IReadOnlyList<Exception>> AssertFaultedAsync()
    {
        await SettleAsync();
        if (ReturnsTask)
        {
            Assert.True(Completion.IsFaulted, $"{Api}: expected Faulted, was {Completion.Status}");
        }
        else
        {
            Assert.True(Completion.IsFaulted || Completion.IsCanceled, $"{Api}: expected the enumeration to throw, was {Completion.Status}");
        }

        return await ExceptionsAsync();
    }

    private static ValueTask Drop(ValueTask<int> pending)
    {
        if (pending.IsCompletedSuccessfully)
        {
            _ = pending.Result;
            return default;
        }

        return new ValueTask(pending.AsTask());
    }

    /// <summary>Reads a stream to its end; an async method keeps the very exception the enumeration threw (and ends Canceled on an OCE).</summary>
    private static async Task ConsumeAsync<TItem>(IAsyncEnumerable<TItem> stream, List<TItem> into)
    {
        await foreach (var item in stream)
        {
            lock (into)
            {
                into.Add(item);
            }
        }
    }
}
