using FanOut.Tests.Diagnostics;
using FanOut.Tests.Infrastructure;

namespace FanOut.Tests.Hardening;

/// <summary>
/// Issue 17 items 1 and 2: a call whose limit it alone uses pulls item k+1 only when a body can start on it, and items start
/// in source order (Parallel.ForEachAsync's promises).
/// </summary>
/// <remarks>Serial: bodies that block a pool thread must not wait behind other tests' blocked threads for the second worker.</remarks>
[Collection(nameof(SerialCollection))]
public sealed class PullRuleTests
{
    private const int Limit = 3;

    public static TheoryData<string, string> Shapes() => ShapesOf("results", "actions", "stream", "ordered-stream", "outcomes");

    /// <summary>FanOutOutcomes takes a failure as an outcome and goes on: it has no FailFast to check.</summary>
    public static TheoryData<string, string> FailFastShapes() => ShapesOf("results", "actions", "stream", "ordered-stream");

    private static TheoryData<string, string> ShapesOf(params string[] apis)
    {
        var data = new TheoryData<string, string>();
        foreach (var source in new[] { "enumerable", "async", "list" })
        {
            foreach (var api in apis)
            {
                data.Add(source, api);
            }
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(Shapes))]
    public async Task FanOut_EveryBodyBlockedAtFixedD_PullsExactlyD(string sourceKind, string api)
    {
        var probe = new SourceProbe(100);
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var started = 0;
        var run = Run(probe, sourceKind, api, async (i, ct) =>
        {
            Interlocked.Increment(ref started);
            await release.Task.WaitAsync(ct);
            return i;
        });

        await Wait.UntilAsync(() => Volatile.Read(ref started) == Limit, "every permit's body started");
        await Task.Delay(100); // a worker that pulls ahead does so right away: give it the chance to be caught
        Assert.Equal(Limit, Volatile.Read(ref started));
        Assert.Equal(Limit, probe.Pulled);

        release.SetResult();
        await run.WithTimeout();
        Assert.Equal(probe.Count, probe.Pulled);
    }

    [Theory]
    [MemberData(nameof(FailFastShapes))]
    public async Task FanOut_FailFastFailureWhileOthersBlock_PullsNothingMore(string sourceKind, string api)
    {
        var probe = new SourceProbe(100);
        var fail = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var started = 0;
        var run = Run(probe, sourceKind, api, async (i, ct) =>
        {
            Interlocked.Increment(ref started);
            if (i == 0)
            {
                await fail.Task;
                throw new InvalidOperationException("item 0 failed");
            }

            await Task.Delay(Timeout.Infinite, ct);
            return i;
        });

        await Wait.UntilAsync(() => Volatile.Read(ref started) == Limit, "every permit's body started");
        fail.SetResult();
        await run.Settled();
        Assert.Equal(Limit, probe.Pulled);
        Assert.True(run.IsFaulted, $"{sourceKind}/{api}: {run.Status}");
    }

    [Fact]
    public async Task FanOut_SynchronousBodyWaitsForTheNextItemToStart_NeverStalls()
    {
        // Items 300 and 700 each wait for the next item to start. Under Fixed(2) the other worker must take 301 (701)
        // next: every item before a started one has started, so no index sits reserved behind a blocked body.
        var list = Enumerable.Range(0, 2000).ToList().AsReadOnly();
        var startedEvents = Enumerable.Range(0, 2000).Select(_ => new ManualResetEventSlim()).ToArray();
        var stalls = 0;
        var stallReport = "";
        await list.FanOutAsync(2, (i, _) =>
        {
            startedEvents[i].Set();

            if ((i == 300 || i == 700) && !startedEvents[i + 1].Wait(TimeSpan.FromSeconds(30)))
            {
                Interlocked.Increment(ref stalls);
                stallReport = $"item {i} waited for {i + 1}; started: {startedEvents.Count(e => e.IsSet)}, pool threads {ThreadPool.ThreadCount}, pending work {ThreadPool.PendingWorkItemCount}";
            }

            return ValueTask.CompletedTask;
        }).WithTimeout();

        Assert.True(stalls == 0, stallReport);
        Assert.All(startedEvents, e => Assert.True(e.IsSet));
    }

    [Fact]
    public async Task FanOut_ItemsOfAList_StartInSourceOrder()
    {
        // When item k starts, items 0..k-1 have started: claims are single indices from one counter, in order.
        var count = 20_000;
        var started = new int[count];
        var violations = 0;
        await Enumerable.Range(0, count).ToArray().FanOutAsync(4, (i, _) =>
        {
            Volatile.Write(ref started[i], 1);
            for (var k = Math.Max(0, i - 64); k < i; k++)
            {
                // A claim of index i happened after every claim below it; a body may still be a few instructions from
                // its first line, so look only for an earlier item that never starts (it would be reserved elsewhere).
                if (Volatile.Read(ref started[k]) == 0 && !SpinWait.SpinUntil(() => Volatile.Read(ref started[k]) == 1, 1000))
                {
                    Interlocked.Increment(ref violations);
                }
            }

            return ValueTask.CompletedTask;
        }).WithTimeout();

        Assert.Equal(0, violations);
    }

    private static Task Run(SourceProbe probe, string sourceKind, string api, Func<int, CancellationToken, ValueTask<int>> body)
    {
        var options = new FanOutOptions { Limit = ConcurrencyLimit.Fixed(Limit), Ordered = api == "ordered-stream" };
        return (sourceKind, api) switch
        {
            ("async", "results") => probe.AsAsyncEnumerable().FanOutAsync(body, options),
            ("async", "actions") => probe.AsAsyncEnumerable().FanOutAsync(async (i, ct) => await body(i, ct), options),
            ("async", "outcomes") => Drain(probe.AsAsyncEnumerable().FanOutOutcomes(body, options)),
            ("async", _) => Drain(probe.AsAsyncEnumerable().FanOutStream(body, options)),
            (_, "results") => Sync(probe, sourceKind).FanOutAsync(body, options),
            (_, "actions") => Sync(probe, sourceKind).FanOutAsync(async (i, ct) => await body(i, ct), options),
            (_, "outcomes") => Drain(Sync(probe, sourceKind).FanOutOutcomes(body, options)),
            _ => Drain(Sync(probe, sourceKind).FanOutStream(body, options)),
        };
    }

    private static IEnumerable<int> Sync(SourceProbe probe, string sourceKind) =>
        sourceKind == "list" ? probe.AsReadOnlyList() : probe.AsEnumerable();

    private static async Task Drain<TOut>(IAsyncEnumerable<TOut> stream)
    {
        await foreach (var _ in stream.ConfigureAwait(false))
        {
        }
    }
}
