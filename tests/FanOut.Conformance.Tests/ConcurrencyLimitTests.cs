using FanOut.Conformance.Tests.Infrastructure;

namespace FanOut.Conformance.Tests;

/// <summary>
/// Parallel.ForEachAsync's Dop_WorkersCreatedRespectingLimit_* and Dataflow's TestParallelExecution and TestOrderMaintained:
/// under <c>Fixed(D)</c> exactly D bodies run at once: D is reached (bodies that wait for each other all get in) and never
/// exceeded. Where Parallel.ForEachAsync's default is <see cref="Environment.ProcessorCount"/>, FanOut's is adaptive, so the
/// promise is expressed with explicit fixed limits.
/// </summary>
public sealed class ConcurrencyLimitTests
{
    public static TheoryData<Api, SourceKind, int> EverythingWithLimits => Matrix.Cross(Matrix.AllApis, Matrix.AllSources, [1, 2, 5]);

    public static TheoryData<Api, SourceKind> Everything => Matrix.Everything;

    /// <summary>The first D bodies wait until D have started (reached); while they wait no more start, and none ever does (respected).</summary>
    [Theory]
    [MemberData(nameof(EverythingWithLimits))]
    public async Task Call_FixedLimit_RunsExactlyLimitBodiesAtOnce(Api api, SourceKind kind, int limit)
    {
        var count = (4 * limit) + 3;
        var tracker = new Tracker();
        var release = Wait.Gate();
        var call = FanOutCall.Start(api, new ProbeSource(kind, count), async (item, ct) =>
        {
            tracker.Enter(item, ct);
            try
            {
                await release.Task.WaitAsync(Wait.Timeout, ct);
                await Task.Yield();
                return item;
            }
            finally
            {
                tracker.Exit();
            }
        }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(limit) });

        try
        {
            await tracker.WhenStarted(limit).Within();
            await Wait.QuietPeriod();
            Assert.Equal(limit, tracker.Started);
        }
        finally
        {
            release.TrySetResult();
        }

        await call.Completion.Within();
        Assert.Equal(count, tracker.Finished);
        Assert.Equal(limit, tracker.MaxActive);
    }

    /// <summary>Dataflow's TestParallelExecution: synchronous bodies that block a thread until D of them meet, phase after phase.</summary>
    [Theory]
    [MemberData(nameof(Everything))]
    public async Task Call_SynchronouslyBlockingBodies_AllLimitBodiesMeet(Api api, SourceKind kind)
    {
        const int Limit = 2;
        const int Phases = 4;
        using var barrier = new Barrier(Limit);
        var missed = 0;
        var tracker = new Tracker();
        var call = FanOutCall.Start(api, new ProbeSource(kind, Limit * Phases), (item, ct) =>
        {
            tracker.Enter(item, ct);
            try
            {
                if (!barrier.SignalAndWait(TimeSpan.FromSeconds(10)))
                {
                    Interlocked.Increment(ref missed);
                    throw new TimeoutException($"item {item} waited alone at the barrier: the limit of {Limit} was not reached");
                }

                return new ValueTask<int>(item);
            }
            finally
            {
                tracker.Exit();
            }
        }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(Limit) });

        await call.Completion.Within();
        Assert.Equal(0, missed);
        Assert.Equal(Limit * Phases, tracker.Finished);
        Assert.True(tracker.MaxActive <= Limit, $"{tracker.MaxActive} bodies ran at once under Fixed({Limit})");
    }

    /// <summary>A large limit is reached too: 256 bodies wait until all 256 have started.</summary>
    [Theory]
    [MemberData(nameof(Everything))]
    public async Task Call_LargeFixedLimit_RunsThatManyBodiesAtOnce(Api api, SourceKind kind)
    {
        const int Limit = 256;
        var tracker = new Tracker();
        var all = tracker.WhenStarted(Limit);
        var call = FanOutCall.Start(api, new ProbeSource(kind, Limit + 50), async (item, ct) =>
        {
            tracker.Enter(item, ct);
            try
            {
                await all.WaitAsync(Wait.Timeout, ct);
                return item;
            }
            finally
            {
                tracker.Exit();
            }
        }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(Limit) });

        await call.Completion.Within();
        Assert.Equal(Limit + 50, tracker.Finished);
        Assert.Equal(Limit, tracker.MaxActive);
    }

    /// <summary>Dataflow's TestOrderMaintained: under Fixed(1) items run one at a time, in source order, each after the previous finished.</summary>
    [Theory]
    [MemberData(nameof(Everything))]
    public async Task Call_LimitOfOne_RunsItemsOneAtATimeInSourceOrder(Api api, SourceKind kind)
    {
        const int Count = 60;
        var tracker = new Tracker();
        var call = FanOutCall.Start(api, new ProbeSource(kind, Count), async (item, ct) =>
        {
            tracker.Enter(item, ct);
            try
            {
                if (item % 3 != 0)
                {
                    await Task.Yield();
                }

                return item;
            }
            finally
            {
                tracker.Exit();
            }
        }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(1) });

        await call.Completion.Within();
        Assert.Equal(Enumerable.Range(0, Count), tracker.StartOrder);
        Assert.Equal(1, tracker.MaxActive);
        if (api != Api.Actions)
        {
            // One at a time, completion order is source order: every API yields 0..Count-1 in order.
            Assert.Equal(Enumerable.Range(0, Count), call.Results);
        }
    }

    /// <summary>With the default (adaptive) limit, bodies that never finish on their own still do not start without bound.</summary>
    [Theory]
    [MemberData(nameof(Everything))]
    public async Task Call_DefaultLimit_StartsABoundedNumberOfBlockedBodies(Api api, SourceKind kind)
    {
        using var cts = new CancellationTokenSource();
        var tracker = new Tracker();
        var call = FanOutCall.Start(api, ProbeSource.Long(kind), tracker.BlockedUntilCanceledAsync, cancellationToken: cts.Token);

        await tracker.WhenStarted(1).Within();
        await Wait.QuietPeriod();
        var started = tracker.Started;
        await cts.CancelAsync();
        await call.AssertCanceledAsync(cts.Token);

        // The default adaptive limit's documented ceiling is AdaptiveLimitOptions.MaxLimit.
        Assert.InRange(started, 1, new AdaptiveLimitOptions().MaxLimit);
    }
}
