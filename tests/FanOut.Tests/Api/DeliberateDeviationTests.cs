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
