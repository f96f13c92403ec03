using FanOut.Tests.Diagnostics;
using FanOut.Tests.Infrastructure;

namespace FanOut.Tests.Api;

/// <summary>Where FanOut departs from Parallel.ForEachAsync on purpose (docs/library.md, "Deliberate departures"): each one pinned.</summary>
[Collection(nameof(SerialCollection))]
public sealed class DeliberateDeviationTests
{
    [Fact]
    public async Task FanOutAsync_UnboundedSynchronousBodies_RunOnAtMostProcessorCountWorkers()
    {
        // Parallel.ForEachAsync runs DOP synchronous bodies at once (threads beyond the cores time-slice them); an unbounded
        // or adaptive FanOut limit stops at the cores for bodies that never yield. Fixed(n) runs n, as Parallel.ForEachAsync.
        var probe = new ConcurrencyProbe();
        await Enumerable.Range(0, 40).FanOutAsync(
            (_, _) =>
            {
                probe.Enter();
                Thread.Sleep(5);
                probe.Exit();
                return ValueTask.CompletedTask;
            },
            new FanOutOptions { Limit = ConcurrencyLimit.Unbounded }).WithTimeout();

        Assert.InRange(probe.Max, 1, Environment.ProcessorCount);
    }

    [Fact]
    public async Task FanOutAsync_ItemClaimedAfterAFailure_IsNotPassedToTheBodyWhereParallelForEachAsyncPassesIt()
    {
        // Item 1 is pulled while item 0's failure stops the run: its MoveNext returns only once the run's token is canceled.
        // Parallel.ForEachAsync passes every element it pulled to the body (with the canceled token); FanOut starts nothing
        // after a stop, so item 1 is taken from the source and never seen by a body.
        static async Task<(List<int> Bodies, int Pulled, Exception? Error)> RunAsync(Func<IEnumerable<int>, Func<int, CancellationToken, ValueTask>, Task> loop)
        {
            var bodies = new List<int>();
            var pulled = 0;
            var runToken = new TaskCompletionSource<CancellationToken>(TaskCreationOptions.RunContinuationsAsynchronously);
            var failNow = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            IEnumerable<int> Source()
            {
                pulled++;
                yield return 0;
                failNow.SetResult();
                var token = runToken.Task.Result; // set by item 0's body, which has started
                SpinWait.SpinUntil(() => token.IsCancellationRequested, Wait.Timeout);
                pulled++;
                yield return 1;
            }

            async ValueTask Body(int item, CancellationToken ct)
            {
                lock (bodies)
                {
                    bodies.Add(item);
                }

                if (item == 0)
                {
                    runToken.SetResult(ct);
                    await failNow.Task;
                    throw new InvalidOperationException("item 0");
                }
            }

            Exception? error = null;
            try
            {
                await loop(Source(), Body).WithTimeout();
            }
            catch (InvalidOperationException e)
            {
                error = e;
            }

            return (bodies, pulled, error);
        }

        var parallel = await RunAsync((source, body) => Parallel.ForEachAsync(source, new ParallelOptions { MaxDegreeOfParallelism = 2 }, body));
        var fanOut = await RunAsync((source, body) => source.FanOutAsync(body, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2) }));

        Assert.Equal((2, "item 0"), (parallel.Pulled, parallel.Error?.Message));
        Assert.Equal([0, 1], parallel.Bodies.Order());
        Assert.Equal((2, "item 0"), (fanOut.Pulled, fanOut.Error?.Message));
        Assert.Equal([0], fanOut.Bodies);
    }

    [Fact]
    public async Task FanOutAsync_AsyncSourceOnASharedFullLimit_PullsAtMostOneItemAhead()
    {
        // Call A holds both permits of a shared Fixed(2); call B's async source gives up one item, which B's worker in turn
        // holds while it waits for a permit: never more (a quiet source holds no permit instead).
        var limit = ConcurrencyLimit.Fixed(2);
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var aStarted = 0;
        var callA = Enumerable.Range(0, 2).FanOutAsync(
            async (_, _) =>
            {
                Interlocked.Increment(ref aStarted);
                await release.Task;
            },
            new FanOutOptions { Limit = limit });
        await Wait.UntilAsync(() => Volatile.Read(ref aStarted) == 2, "call A holds the whole limit");

        var source = new SourceProbe(50);
        var callB = source.AsAsyncEnumerable().FanOutAsync((_, _) => ValueTask.CompletedTask, new FanOutOptions { Limit = limit });
        await Wait.UntilAsync(() => source.Pulled >= 1, "call B pulled its one item");
        await Task.Delay(100);
        Assert.Equal(1, source.Pulled);

        release.SetResult();
        await Task.WhenAll(callA, callB).WithTimeout();
        Assert.Equal(50, source.Pulled);
    }
}
