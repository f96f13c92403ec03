using FanOut.Conformance.Tests.Infrastructure;

namespace FanOut.Conformance.Tests;

/// <summary>
/// Parallel.ForEachAsync's RunsAsynchronously_* and ExecutionContext_FlowsToWorkerBodies_*: the call returns before any
/// body runs and no body runs on the caller's thread inside the call; the caller's ExecutionContext (AsyncLocal values)
/// flows into every body, and does not when the caller suppressed the flow. Streams start nothing until enumerated, and a
/// consumer that leaves early leaves nothing running. Parallel.ForEachAsync's TaskScheduler tests have no counterpart.
/// </summary>
public sealed class ExecutionTests
{
    [ThreadStatic]
    private static bool t_insideCall;

    public static TheoryData<Api, SourceKind> Everything => Matrix.Everything;

    public static TheoryData<Api, SourceKind> TaskCalls => Matrix.TaskCalls;

    public static TheoryData<Api, SourceKind> Streams => Matrix.Streams;

    /// <summary>
    /// RunsAsynchronously_EvenForEntirelySynchronousWork: over a source that does not end, with bodies that complete
    /// synchronously, the call (for a stream, its first MoveNextAsync) still returns, and no body ran on the caller's thread
    /// while it was inside the call. A body that finds itself inside the call throws, so a wrong implementation ends instead
    /// of spinning forever.
    /// </summary>
    [Theory]
    [MemberData(nameof(Everything))]
    public async Task Call_SynchronousBodiesOverLongSource_ReturnsBeforeAnyBodyRunsOnCallersThread(Api api, SourceKind kind)
    {
        using var cts = new CancellationTokenSource();
        var inline = 0;
        Body body = (item, _) =>
        {
            if (t_insideCall)
            {
                Interlocked.Increment(ref inline);
                throw new InvalidOperationException("a body ran inline, on the caller's thread, inside the call");
            }

            return new ValueTask<int>(item);
        };

        var source = ProbeSource.Long(kind, asyncYields: false); // an async source that never yields either
        Task completion;
        t_insideCall = true;
        try
        {
            if (api is Api.Actions or Api.Results)
            {
                completion = FanOutCall.Start(api, source, body, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2) }, cts.Token).Completion;
                Assert.False(completion.IsCompleted, $"the call completed inline: {completion.Status}");
            }
            else
            {
                var options = new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2), Ordered = api == Api.OrderedStream };
                completion = api == Api.Outcomes
                    ? StartAndDrain(source.AsyncEnumerable is { } a ? a.FanOutOutcomes<int, int>(body.Invoke, options, cts.Token) : source.Enumerable!.FanOutOutcomes<int, int>(body.Invoke, options, cts.Token))
                    : StartAndDrain(source.AsyncEnumerable is { } b ? b.FanOutStream<int, int>(body.Invoke, options, cts.Token) : source.Enumerable!.FanOutStream<int, int>(body.Invoke, options, cts.Token));
            }
        }
        finally
        {
            t_insideCall = false;
        }

        await cts.CancelAsync();
        await completion.SettleAsync();
        Assert.Equal(0, inline);

        // The first MoveNextAsync starts the run, on the caller's thread, inside the call: it must return without running it.
        static Task StartAndDrain<TItem>(IAsyncEnumerable<TItem> stream)
        {
            var enumerator = stream.GetAsyncEnumerator();
            var first = enumerator.MoveNextAsync();
            return DrainAsync(enumerator, first);
        }

        static async Task DrainAsync<TItem>(IAsyncEnumerator<TItem> enumerator, ValueTask<bool> first)
        {
            await using (enumerator)
            {
                var more = await first;
                while (more)
                {
                    more = await enumerator.MoveNextAsync();
                }
            }
        }
    }

    /// <summary>ExecutionContext_FlowsToWorkerBodies: an AsyncLocal the caller set is seen by every body, before and after it yields.</summary>
    [Theory]
    [MemberData(nameof(Everything))]
    public async Task Call_CallerSetsAsyncLocal_EveryBodySeesIt(Api api, SourceKind kind)
    {
        var local = new AsyncLocal<int> { Value = 42 };
        var wrong = 0;
        var call = FanOutCall.Start(api, new ProbeSource(kind, 100), async (item, _) =>
        {
            var before = local.Value;
            await Task.Yield();
            if (before != 42 || local.Value != 42)
            {
                Interlocked.Increment(ref wrong);
            }

            return item;
        }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(4) });

        await call.Completion.Within();
        Assert.Equal(0, wrong);
    }

    /// <summary>ExecutionContext_FlowsToWorkerBodies_Async with flow suppressed: the bodies do not see the caller's AsyncLocal.</summary>
    [Theory]
    [MemberData(nameof(TaskCalls))]
    public async Task Call_ExecutionContextFlowSuppressed_BodiesDoNotSeeCallersAsyncLocal(Api api, SourceKind kind)
    {
        var local = new AsyncLocal<int> { Value = 42 };
        var seen = new System.Collections.Concurrent.ConcurrentBag<int>();
        FanOutCall call;
        using (ExecutionContext.SuppressFlow())
        {
            call = FanOutCall.Start(api, new ProbeSource(kind, 50), async (item, _) =>
            {
                seen.Add(local.Value);
                await Task.Yield();
                seen.Add(local.Value);
                return item;
            }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(4) });
        }

        await call.Completion.Within();
        Assert.All(seen, static v => Assert.Equal(0, v));
    }

    /// <summary>A stream starts nothing until it is enumerated: no body runs, the source is not touched.</summary>
    [Theory]
    [MemberData(nameof(Streams))]
    public async Task Stream_NotEnumerated_RunsNothing(Api api, SourceKind kind)
    {
        var source = new ProbeSource(kind, 10);
        var ran = 0;
        var options = new FanOutOptions { Ordered = api == Api.OrderedStream };
        Func<int, CancellationToken, ValueTask<int>> body = (item, _) =>
        {
            Interlocked.Increment(ref ran);
            return new ValueTask<int>(item);
        };
        object stream = api == Api.Outcomes
            ? source.AsyncEnumerable is { } a ? a.FanOutOutcomes(body, options) : source.Enumerable!.FanOutOutcomes(body, options)
            : source.AsyncEnumerable is { } b ? b.FanOutStream(body, options) : source.Enumerable!.FanOutStream(body, options);

        await Wait.QuietPeriod();
        Assert.NotNull(stream);
        Assert.Equal(0, Volatile.Read(ref ran));
        Assert.Equal(0, source.EnumeratorsCreated);
        Assert.Equal(0, source.Pulled);
    }

    /// <summary>
    /// A consumer that stops early (break) cancels the items in flight and waits for them: once the enumeration is disposed,
    /// no body runs, none starts later, the bodies saw their token canceled, and the enumerator is disposed.
    /// </summary>
    [Theory]
    [MemberData(nameof(Streams))]
    public async Task Stream_ConsumerBreaksEarly_LeavesNothingRunning(Api api, SourceKind kind)
    {
        var source = ProbeSource.Long(kind);
        var tracker = new Tracker();
        var options = new FanOutOptions { Limit = ConcurrencyLimit.Fixed(3), Ordered = api == Api.OrderedStream };
        async ValueTask<int> Body(int item, CancellationToken ct)
        {
            tracker.Enter(item, ct);
            try
            {
                if (item % 4 == 3)
                {
                    await Task.Delay(Timeout.Infinite, ct); // some items hang until canceled
                }

                await Task.Yield();
                return item;
            }
            finally
            {
                tracker.Exit();
            }
        }

        var read = 0;
        if (api == Api.Outcomes)
        {
            var stream = source.AsyncEnumerable is { } a ? a.FanOutOutcomes<int, int>(Body, options) : source.Enumerable!.FanOutOutcomes<int, int>(Body, options);
            await foreach (var _ in stream)
            {
                if (++read == 5)
                {
                    break;
                }
            }
        }
        else
        {
            var stream = source.AsyncEnumerable is { } a ? a.FanOutStream<int, int>(Body, options) : source.Enumerable!.FanOutStream<int, int>(Body, options);
            await foreach (var _ in stream)
            {
                if (++read == 2)
                {
                    break;
                }
            }
        }

        Assert.Equal(0, tracker.Active);
        var started = tracker.Started;
        Assert.All(tracker.Tokens, static t => Assert.True(t.IsCancellationRequested));
        if (source.HasEnumerator)
        {
            Assert.Equal(1, source.Disposed);
        }

        await Wait.QuietPeriod();
        Assert.Equal(started, tracker.Started);
    }

    [Fact(Skip = "Parallel.ForEachAsync's TaskScheduler_* and Dop_*TaskScheduler tests have no counterpart: FanOutOptions has no TaskScheduler; bodies always start on the thread pool.")]
    public void Call_TaskScheduler_NotApplicable()
    {
    }
}
