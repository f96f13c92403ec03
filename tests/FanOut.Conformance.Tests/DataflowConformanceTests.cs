using FanOut.Conformance.Tests.Infrastructure;

namespace FanOut.Conformance.Tests;

/// <summary>
/// TPL Dataflow's TransformBlockTests and ActionBlockTests, re-expressed: TransformBlock's EnsureOrdered is FanOutStream's
/// <see cref="FanOutOptions.Ordered"/> (FanOutAsync's results are always in source order), a faulting body faults the
/// completion, and a bounded block's back-pressure is a stream whose consumer does not read. Dataflow's Post/Offer/Link
/// protocol, MaxMessagesPerTask, TaskScheduler and null-task tests have no counterpart (a body returns a ValueTask, never null).
/// Where Dataflow ignores an OperationCanceledException from a body (TestOperationCanceledExceptionsIgnored), FanOut follows
/// Parallel.ForEachAsync instead: see <see cref="CancellationTests"/>.
/// </summary>
public sealed class DataflowConformanceTests
{
    public static TheoryData<SourceKind> Sources => [.. Matrix.AllSources];

    public static TheoryData<Api, SourceKind> OrderedApis => Matrix.Cross([Api.Results, Api.OrderedStream], Matrix.AllSources);

    public static TheoryData<Api, SourceKind> CompletionOrderApis => Matrix.Cross([Api.Stream, Api.Outcomes], Matrix.AllSources);

    public static TheoryData<Api, SourceKind, int> OrderedByLimit => Matrix.Cross([Api.Results, Api.OrderedStream], Matrix.AllSources, [1, 2, 8]);

    public static TheoryData<Api, SourceKind> Streams => Matrix.Streams;

    /// <summary>
    /// TestOrdering_*_OrderedEnabled: results come out in source order although the bodies finish in reverse. An ordered
    /// stream yields nothing until item 0 finished.
    /// </summary>
    [Theory]
    [MemberData(nameof(OrderedApis))]
    public async Task Call_BodiesFinishInReverse_ResultsInSourceOrder(Api api, SourceKind kind)
    {
        const int Count = 10;
        var finish = Enumerable.Range(0, Count).Select(static _ => new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously)).ToArray();
        var tracker = new Tracker();
        var call = FanOutCall.Start(api, new ProbeSource(kind, Count), async (item, ct) =>
        {
            tracker.Enter(item, ct);
            return await finish[item].Task.WaitAsync(Wait.Timeout, ct);
        }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(Count) });

        await tracker.WhenStarted(Count).Within();
        for (var i = Count - 1; i > 0; i--)
        {
            finish[i].SetResult(i * 10);
        }

        await Wait.QuietPeriod();
        Assert.Empty(call.Results); // nothing can come out before item 0
        finish[0].SetResult(0);
        await call.Completion.Within();
        Assert.Equal(Enumerable.Range(0, Count).Select(static i => i * 10), call.Results);
    }

    /// <summary>TestOrdering_*_OrderedDisabled: in completion order each result comes out as soon as its body finishes ("if ordering were enabled, this test would hang").</summary>
    [Theory]
    [MemberData(nameof(CompletionOrderApis))]
    public async Task Stream_BodiesFinishInReverse_YieldsInCompletionOrder(Api api, SourceKind kind)
    {
        const int Count = 10;
        var finish = Enumerable.Range(0, Count).Select(static _ => new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously)).ToArray();
        var source = new ProbeSource(kind, Count);
        var options = new FanOutOptions { Limit = ConcurrencyLimit.Fixed(Count) };
        async ValueTask<int> Body(int item, CancellationToken ct) => await finish[item].Task.WaitAsync(Wait.Timeout, ct);

        var yielded = new List<int>();
        if (api == Api.Outcomes)
        {
            var stream = source.AsyncEnumerable is { } a ? a.FanOutOutcomes<int, int>(Body, options) : source.Enumerable!.FanOutOutcomes<int, int>(Body, options);
            await using var e = stream.GetAsyncEnumerator();
            for (var i = Count - 1; i >= 0; i--)
            {
                finish[i].SetResult(i);
                Assert.True(await e.MoveNextAsync().AsTask().Within());
                Assert.Equal(i, e.Current.Index);
                yielded.Add(e.Current.Result);
            }

            Assert.False(await e.MoveNextAsync().AsTask().Within());
        }
        else
        {
            var stream = source.AsyncEnumerable is { } a ? a.FanOutStream<int, int>(Body, options) : source.Enumerable!.FanOutStream<int, int>(Body, options);
            await using var e = stream.GetAsyncEnumerator();
            for (var i = Count - 1; i >= 0; i--)
            {
                finish[i].SetResult(i);
                Assert.True(await e.MoveNextAsync().AsTask().Within());
                yielded.Add(e.Current);
            }

            Assert.False(await e.MoveNextAsync().AsTask().Within());
        }

        Assert.Equal(Enumerable.Range(0, Count).Reverse(), yielded);
    }

    /// <summary>TestProducerConsumer / TestOrdering_Sync: a thousand items, synchronous and yielding bodies, come out in source order.</summary>
    [Theory]
    [MemberData(nameof(OrderedByLimit))]
    public async Task Call_ManyMixedBodies_ResultsInSourceOrder(Api api, SourceKind kind, int limit)
    {
        const int Count = 1_000;
        var call = FanOutCall.Start(api, new ProbeSource(kind, Count), static async (item, _) =>
        {
            if (item % 3 == 0)
            {
                await Task.Yield();
            }

            return item;
        }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(limit) });

        await call.Completion.Within();
        Assert.Equal(Enumerable.Range(0, Count), call.Results);
    }

    /// <summary>
    /// A bounded block accepts no more than its capacity (TestNonGreedy, TestMessagePostponement): a stream whose consumer
    /// stops reading stops its workers after a bounded number of results, and they go on when the consumer reads again.
    /// </summary>
    [Theory]
    [MemberData(nameof(Streams))]
    public async Task Stream_ConsumerStopsReading_WorkersStopAfterBoundedBuffer(Api api, SourceKind kind)
    {
        // Far above any buffer FanOut keeps for Fixed(2), far below what synchronous bodies run in the quiet period unchecked.
        const int Bound = 10_000;
        var source = ProbeSource.Long(kind);
        var tracker = new Tracker();
        var options = new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2), Ordered = api == Api.OrderedStream };
        ValueTask<int> Body(int item, CancellationToken ct)
        {
            tracker.Enter(item, ct);
            tracker.Exit();
            return new ValueTask<int>(item);
        }

        var consumed = 0;
        async Task ReadAsync<TItem>(IAsyncEnumerator<TItem> e, int count)
        {
            for (var i = 0; i < count; i++)
            {
                Assert.True(await e.MoveNextAsync().AsTask().Within());
                consumed++;
            }
        }

        async Task<(int Stalled, int Resumed)> ExerciseAsync<TItem>(IAsyncEnumerable<TItem> stream)
        {
            await using var e = stream.GetAsyncEnumerator();
            await ReadAsync(e, 1);
            await Wait.QuietPeriod();
            await Wait.QuietPeriod();
            var stalled = tracker.Started;
            await ReadAsync(e, Bound + 100);
            return (stalled, tracker.Started);
        }

        var (stalledAt, resumedTo) = api == Api.Outcomes
            ? await ExerciseAsync(source.AsyncEnumerable is { } a ? a.FanOutOutcomes<int, int>(Body, options) : source.Enumerable!.FanOutOutcomes<int, int>(Body, options))
            : await ExerciseAsync(source.AsyncEnumerable is { } b ? b.FanOutStream<int, int>(Body, options) : source.Enumerable!.FanOutStream<int, int>(Body, options));

        Assert.InRange(stalledAt, 1, Bound);
        Assert.True(resumedTo >= consumed, $"{consumed} results read but only {resumedTo} bodies ran");
    }

    /// <summary>TestFaultingAndCancellation / TestCountZeroAtCompletion: after a fault, nothing is left running or buffered to run.</summary>
    [Theory]
    [MemberData(nameof(Sources))]
    public async Task FanOutAsync_BodyFaults_CompletionFaultsAndNothingRunsAfterwards(SourceKind kind)
    {
        var tracker = new Tracker();
        var call = FanOutCall.Start(Api.Actions, ProbeSource.Long(kind), async (item, ct) =>
        {
            tracker.Enter(item, ct);
            try
            {
                await Task.Yield();
                return item == 50 ? throw new InvalidCastException() : item;
            }
            finally
            {
                tracker.Exit();
            }
        }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(4) });

        var exceptions = await call.AssertFaultedAsync();
        Assert.IsType<InvalidCastException>(Assert.Single(exceptions));
        Assert.Equal(0, tracker.Active);
        var started = tracker.Started;
        await Wait.QuietPeriod();
        Assert.Equal(started, tracker.Started);
    }
}
