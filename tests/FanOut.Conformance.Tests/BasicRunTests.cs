using FanOut.Conformance.Tests.Infrastructure;

namespace FanOut.Conformance.Tests;

/// <summary>
/// Parallel.ForEachAsync's EmptySource_*, PreCanceled_CancelsSynchronously and AllItemsEnumeratedOnce_*, and Dataflow's
/// TestBasicMessageProcessing, for every API and source kind.
/// </summary>
public sealed class BasicRunTests
{
    public static TheoryData<Api, SourceKind> Everything => Matrix.Everything;

    public static TheoryData<Api, SourceKind, int> EverythingWithLimits => Matrix.Cross(Matrix.AllApis, Matrix.AllSources, [0, 1, 3]);

    [Theory]
    [MemberData(nameof(Everything))]
    public async Task Call_EmptySource_SucceedsWithoutRunningBody(Api api, SourceKind kind)
    {
        var source = new ProbeSource(kind, 0);
        var ran = 0;
        var call = FanOutCall.Start(api, source, (item, _) =>
        {
            Interlocked.Increment(ref ran);
            return new ValueTask<int>(item);
        });

        await call.Completion.Within();

        Assert.Equal(0, ran);
        Assert.Empty(call.Results);
        Assert.Empty(call.Outcomes);
        if (source.HasEnumerator)
        {
            Assert.Equal(1, source.Disposed);
        }
    }

    [Theory]
    [MemberData(nameof(Everything))]
    public async Task Call_PreCanceledToken_EndsCanceledWithoutTouchingSourceOrBody(Api api, SourceKind kind)
    {
        using var cts = new CancellationTokenSource();
        await cts.CancelAsync();
        var source = new ProbeSource(kind, 10);
        var ran = 0;

        var call = FanOutCall.Start(api, source, (item, _) =>
        {
            Interlocked.Increment(ref ran);
            return new ValueTask<int>(item);
        }, cancellationToken: cts.Token);

        if (call.ReturnsTask)
        {
            // Parallel.ForEachAsync returns an already-canceled task: nothing is scheduled.
            Assert.True(call.Completion.IsCanceled, $"expected a synchronously canceled task, was {call.Completion.Status}");
        }

        await call.AssertCanceledAsync(cts.Token);
        Assert.Equal(0, ran);
        Assert.Equal(0, source.EnumeratorsCreated);
        Assert.Equal(0, source.Pulled);
    }

    /// <summary>Every item runs exactly once and its result lands where the API promises it (limit 0: the default options).</summary>
    [Theory]
    [MemberData(nameof(EverythingWithLimits))]
    public async Task Call_EveryItem_RunsExactlyOnceWithItsResult(Api api, SourceKind kind, int limit)
    {
        const int Count = 200;
        var source = new ProbeSource(kind, Count);
        var runs = new int[Count];
        var options = limit == 0 ? null : new FanOutOptions { Limit = ConcurrencyLimit.Fixed(limit) };

        var call = FanOutCall.Start(api, source, async (item, _) =>
        {
            Interlocked.Increment(ref runs[item]);
            if (item % 2 == 0)
            {
                await Task.Yield(); // half the bodies complete asynchronously, half synchronously
            }

            return item * 3;
        }, options);

        await call.Completion.Within();

        Assert.All(runs, r => Assert.Equal(1, r));
        var expected = Enumerable.Range(0, Count).Select(static i => i * 3).ToArray();
        switch (api)
        {
            case Api.Actions:
                break;
            case Api.Results or Api.OrderedStream:
                Assert.Equal(expected, call.Results);
                break;
            case Api.Stream:
                Assert.Equal(expected, call.Results.Order());
                break;
            case Api.Outcomes:
                Assert.Equal(Enumerable.Range(0, Count).Select(static i => (long)i), call.Outcomes.Select(static o => o.Index).Order());
                Assert.All(call.Outcomes, static o => Assert.Equal(o.Index * 3, o.Result));
                Assert.All(call.Outcomes, static o => Assert.True(o.Succeeded));
                break;
        }

        if (source.CountsPulls)
        {
            Assert.Equal(Count, source.Pulled);
        }

        if (source.HasEnumerator)
        {
            Assert.Equal(1, source.EnumeratorsCreated);
            Assert.Equal(1, source.Disposed);
        }
    }
}
