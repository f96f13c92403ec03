using FanOut.Conformance.Tests.Infrastructure;

namespace FanOut.Conformance.Tests;

/// <summary>
/// Issue 17, item 1: a call whose limit it alone uses takes item k+1 from the source only when a body can start on it, as
/// Parallel.ForEachAsync does (a worker pulls under the enumerator's lock only once it is free to run the item). The XML
/// docs promise it: "The source is pulled lazily (only when a permit is free)". A channel reader or a queue shared with
/// other consumers loses an item to an early pull.
/// </summary>
public sealed class PullTests
{
    public static TheoryData<Api, SourceKind, int> CountingWithLimits => Matrix.Cross(Matrix.AllApis, Matrix.CountingSources, [1, 2, 4]);

    public static TheoryData<Api, SourceKind> FailingCounting => Matrix.FailingCounting;

    public static TheoryData<Api, SourceKind> Counting => Matrix.Counting;

    /// <summary>Independent runs of the racy scenarios: whether a wrong implementation pulls ahead depends on how its workers start.</summary>
    private const int Rounds = 5;

    /// <summary>
    /// With every body blocked under Fixed(D), exactly D items have been pulled; once released, each item is pulled once.
    /// Checked over several runs: a correct implementation never pulls ahead.
    /// </summary>
    [Theory]
    [MemberData(nameof(CountingWithLimits))]
    public async Task Call_AllBodiesBlocked_HasPulledExactlyLimitItems(Api api, SourceKind kind, int limit)
    {
        const int Count = 40;
        var wrong = new List<string>();
        for (var round = 0; round < Rounds; round++)
        {
            var source = new ProbeSource(kind, Count);
            var tracker = new Tracker();
            var release = Wait.Gate();
            var call = FanOutCall.Start(api, source, async (item, ct) =>
            {
                tracker.Enter(item, ct);
                try
                {
                    await release.Task.WaitAsync(Wait.Timeout, ct);
                    return item;
                }
                finally
                {
                    tracker.Exit();
                }
            }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(limit) });

            int pulledWhileBlocked;
            try
            {
                await tracker.WhenStarted(limit).Within();
                await Task.Delay(30);
                pulledWhileBlocked = source.Pulled;
            }
            finally
            {
                release.TrySetResult();
            }

            await call.Completion.Within();
            Assert.Equal(Count, source.Pulled);
            if (pulledWhileBlocked != limit)
            {
                wrong.Add($"round {round}: {pulledWhileBlocked} pulled while {limit} bodies were blocked");
            }
        }

        Assert.Empty(wrong);
    }

    /// <summary>
    /// After a FailFast failure nothing more is pulled: item 0 fails once item 1 runs and the source has settled; from then
    /// on the source hands out nothing, and in all only the two items that started were ever taken from it.
    /// </summary>
    [Theory]
    [MemberData(nameof(FailingCounting))]
    public async Task Call_FailFastBodyFailure_PullsNothingMore(Api api, SourceKind kind)
    {
        var source = ProbeSource.Long(kind);
        var tracker = new Tracker();
        var secondStarted = tracker.WhenStarted(2);
        var pulledAtFailure = -1;
        var call = FanOutCall.Start(api, source, async (item, ct) =>
        {
            tracker.Enter(item, ct);
            try
            {
                if (item == 0)
                {
                    await secondStarted.WaitAsync(Wait.Timeout, CancellationToken.None);
                    await Wait.QuietPeriod();
                    pulledAtFailure = source.Pulled;
                    throw new FormatException("item 0 fails");
                }

                // Item 1 (and any other) runs until the failure cancels it, then returns normally.
                await Task.Delay(Timeout.Infinite, ct).ContinueWith(static _ => { }, TaskScheduler.Default);
                return item;
            }
            finally
            {
                tracker.Exit();
            }
        }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2) });

        var exceptions = await call.AssertFaultedAsync();
        Assert.IsType<FormatException>(Assert.Single(exceptions));
        Assert.Equal(2, tracker.Started);
        Assert.True(pulledAtFailure == source.Pulled, $"{source.Pulled - pulledAtFailure} item(s) pulled after the failure");
        Assert.True(source.Pulled == tracker.Started, $"{source.Pulled} items pulled, {tracker.Started} started");
    }

    /// <summary>Under Fixed(1), while a body runs the source has handed out exactly the items started so far: never one ahead.</summary>
    [Theory]
    [MemberData(nameof(Counting))]
    public async Task Call_LimitOfOneWithSlowBodies_PullsEachItemOnlyWhenItStarts(Api api, SourceKind kind)
    {
        const int Count = 30;
        var source = new ProbeSource(kind, Count);
        var aheadSeen = new List<(int Item, int Pulled)>();
        var call = FanOutCall.Start(api, source, async (item, ct) =>
        {
            await Task.Yield(); // let a worker that pulls ahead do so while this body runs
            await Task.Delay(1, ct);
            var pulled = source.Pulled;
            if (pulled != item + 1)
            {
                lock (aheadSeen)
                {
                    aheadSeen.Add((item, pulled));
                }
            }

            return item;
        }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(1) });

        await call.Completion.Within();
        Assert.Empty(aheadSeen);
    }

    /// <summary>
    /// The same promise with no Limit given (a fresh adaptive limit, whatever value it settles at): while every body is
    /// blocked, the source has handed out exactly the items that started. The adaptive limit may still be ramping, so a
    /// start may be in progress when the test looks: it looks several times and needs the counts to agree once.
    /// </summary>
    [Theory]
    [MemberData(nameof(Counting))]
    public async Task Call_DefaultLimitAllBodiesBlocked_PulledOnlyWhatStarted(Api api, SourceKind kind)
    {
        using var cts = new CancellationTokenSource();
        var source = ProbeSource.Long(kind);
        var tracker = new Tracker();
        var call = FanOutCall.Start(api, source, async (item, ct) =>
        {
            tracker.Enter(item, ct);
            await Task.Delay(Timeout.Infinite, ct).ContinueWith(static _ => { }, TaskScheduler.Default);
            return item;
        }, cancellationToken: cts.Token);

        var samples = new List<(int Started, int Pulled)>();
        try
        {
            await tracker.WhenStarted(1).Within();
            for (var i = 0; i < 5; i++)
            {
                await Wait.QuietPeriod();
                samples.Add((tracker.Started, source.Pulled));
                if (samples[^1].Started == samples[^1].Pulled)
                {
                    break;
                }
            }
        }
        finally
        {
            await cts.CancelAsync();
        }

        await call.SettleAsync();
        Assert.True(
            samples.Exists(static s => s.Started == s.Pulled),
            $"pulled ahead of starts at every look: {string.Join(", ", samples.Select(static s => $"{s.Pulled} pulled/{s.Started} started"))}");
    }

    public static TheoryData<Api> Apis => [.. Matrix.AllApis];

    /// <summary>
    /// The issue's consequence, concretely: a channel's reader shared with another consumer. With both bodies blocked under
    /// Fixed(2), FanOut has taken items 0 and 1 only, so the other consumer's next read gets item 2; nothing is lost to a
    /// read ahead that sits in a worker waiting for a permit.
    /// </summary>
    [Theory]
    [MemberData(nameof(Apis))]
    public async Task Call_ChannelReaderSharedWithAnotherConsumer_TakesOnlyWhatItRuns(Api api)
    {
        var wrong = new List<string>();
        for (var round = 0; round < Rounds; round++)
        {
            var channel = System.Threading.Channels.Channel.CreateUnbounded<int>();
            for (var i = 0; i < 10; i++)
            {
                Assert.True(channel.Writer.TryWrite(i));
            }

            var tracker = new Tracker();
            var release = Wait.Gate();
            var call = FanOutCall.Start(api, channel.Reader.ReadAllAsync(), async (item, ct) =>
            {
                tracker.Enter(item, ct);
                await release.Task.WaitAsync(Wait.Timeout, ct);
                return item;
            }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2) });

            int othersRead;
            try
            {
                await tracker.WhenStarted(2).Within();
                await Task.Delay(30);
                Assert.True(channel.Reader.TryRead(out othersRead), "FanOut took every item");
            }
            finally
            {
                channel.Writer.Complete();
                release.TrySetResult();
            }

            await call.Completion.Within();
            if (othersRead != 2)
            {
                wrong.Add($"round {round}: the other consumer read item {othersRead}, not 2");
            }
        }

        Assert.Empty(wrong);
    }
}
