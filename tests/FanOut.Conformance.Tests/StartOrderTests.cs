using FanOut.Conformance.Tests.Infrastructure;

namespace FanOut.Conformance.Tests;

/// <summary>
/// Issue 17, item 2: items start in source order. Parallel.ForEachAsync's workers take items from one enumerator under a
/// lock (or, for ForAsync, one shared counter), so when item k starts every item before it has been handed to a worker that
/// starts it at once. A body may therefore wait for a later item to start, provided the limit leaves room for it.
/// </summary>
public sealed class StartOrderTests
{
    public static TheoryData<Api, SourceKind> Everything => Matrix.Everything;

    /// <summary>
    /// The issue's scenario: 2,000 items under Fixed(2); a synchronous body for item 300 blocks until item 301 starts, and one
    /// for item 700 until 701 starts. In source order the other worker starts 301 (701) next, so neither waits. A body that
    /// sees any item 100 or more past its own start first knows the run went on without 301 (701): that is the failure, and
    /// it stops waiting, so a wrong implementation fails fast instead of stalling.
    /// </summary>
    [Theory]
    [MemberData(nameof(Everything))]
    public async Task Call_BodyWaitsForNextItemToStart_NeverStalls(Api api, SourceKind kind)
    {
        const int Count = 2_000;
        int[] waiters = [300, 700];
        var started = new bool[Count];
        var nextStarted = waiters.ToDictionary(static w => w, static _ => new ManualResetEventSlim());
        var overtaken = waiters.ToDictionary(static w => w, static _ => new ManualResetEventSlim());
        var stalled = new List<string>();

        var call = FanOutCall.Start(api, new ProbeSource(kind, Count), (item, _) =>
        {
            Volatile.Write(ref started[item], true);
            foreach (var w in waiters)
            {
                if (item == w + 1)
                {
                    nextStarted[w].Set();
                }
                else if (item >= w + 100)
                {
                    overtaken[w].Set();
                }
            }

            if (nextStarted.TryGetValue(item, out var next))
            {
                // Synchronous, as in the issue: the body holds its thread while it waits.
                WaitHandle.WaitAny([next.WaitHandle, overtaken[item].WaitHandle], Wait.Timeout);
                if (!Volatile.Read(ref started[item + 1]))
                {
                    var firstLater = Enumerable.Range(item + 2, Count - item - 2).FirstOrDefault(i => Volatile.Read(ref started[i]), -1);
                    lock (stalled)
                    {
                        stalled.Add($"item {item} waited for {item + 1}, which had not started while {firstLater} had");
                    }
                }
            }

            return new ValueTask<int>(item);
        }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2) });

        await call.Completion.Within();
        Assert.Empty(stalled);
    }

    /// <summary>
    /// Under Fixed(D), when item k starts at most D-1 items before it have not started yet: those are held by the other D-1
    /// slots, between taking their item and starting its body. Any more means items were taken out of order (or held ahead
    /// of a permit).
    /// </summary>
    [Theory]
    [MemberData(nameof(Everything))]
    public async Task Call_ItemStarts_OvertakeAtMostLimitMinusOneEarlierItems(Api api, SourceKind kind)
    {
        const int Count = 1_000;
        const int Limit = 3;
        var gate = new Lock();
        var started = new bool[Count];
        var lowestUnstarted = 0;
        var worst = (Item: -1, Unstarted: 0);

        var call = FanOutCall.Start(api, new ProbeSource(kind, Count), async (item, _) =>
        {
            lock (gate)
            {
                started[item] = true;
                while (lowestUnstarted < Count && started[lowestUnstarted])
                {
                    lowestUnstarted++;
                }

                var unstarted = 0;
                for (var i = lowestUnstarted; i < item; i++)
                {
                    unstarted += started[i] ? 0 : 1;
                }

                if (unstarted > worst.Unstarted)
                {
                    worst = (item, unstarted);
                }
            }

            if (item % 7 == 0)
            {
                await Task.Yield();
            }

            return item;
        }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(Limit) });

        await call.Completion.Within();
        Assert.True(
            worst.Unstarted <= Limit - 1,
            $"item {worst.Item} started while {worst.Unstarted} earlier items had not (at most {Limit - 1} under Fixed({Limit}))");
    }

    /// <summary>
    /// When D bodies that never finish fill Fixed(D), the items that started are exactly items 0..D-1: a later item never
    /// takes a slot ahead of an earlier one, and no earlier item is left pulled but unstarted. Repeated, because the
    /// interleaving that breaks it (two workers racing for the source and then for the last permit) is rare in one run.
    /// </summary>
    [Theory]
    [MemberData(nameof(Everything))]
    public async Task Call_LimitFilledByBlockedBodies_StartedItemsAreTheFirstLimitItems(Api api, SourceKind kind)
    {
        const int Limit = 4;
        const int Rounds = 200;
        var wrong = new List<string>();
        for (var round = 0; round < Rounds; round++)
        {
            using var cts = new CancellationTokenSource();
            var tracker = new Tracker();
            var call = FanOutCall.Start(api, ProbeSource.Long(kind), async (item, ct) =>
            {
                tracker.Enter(item, ct);
                await Task.Delay(Timeout.Infinite, ct).ContinueWith(static _ => { }, TaskScheduler.Default);
                return item;
            }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(Limit) }, cts.Token);

            await tracker.WhenStarted(Limit).Within();
            var started = tracker.StartOrder.Order().ToArray();
            if (!started.SequenceEqual(Enumerable.Range(0, Limit)))
            {
                wrong.Add($"round {round}: started [{string.Join(", ", started)}]");
            }

            await cts.CancelAsync();
            await call.SettleAsync();
        }

        Assert.Empty(wrong);
    }
}
