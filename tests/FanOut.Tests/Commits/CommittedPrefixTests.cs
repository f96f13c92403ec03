using FanOut.Tests.Infrastructure;

namespace FanOut.Tests.Commits;

/// <summary>
/// Issue 20 item 8: an ordered stream reports the highest index below which every item succeeded and was consumed
/// (<see cref="CommittedPrefix"/>), and in FailFast yields nothing after a failed index before the failure surfaces.
/// </summary>
public sealed class CommittedPrefixTests
{
    [Fact]
    public async Task FanOutStream_OrderedFailFastItemFailsAfterLaterItemsFinished_YieldsOnlyTheItemsBeforeItThenThrows()
    {
        const int count = 21;
        var othersDone = 0;
        var laterDone = 0;
        var allOthersDone = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var prefix = new CommittedPrefix();
        var seen = new List<int>();

        var error = await Assert.ThrowsAsync<InvalidOperationException>(async () =>
        {
            await foreach (var r in Enumerable.Range(0, count).FanOutStream(
                async (i, ct) =>
                {
                    if (i == 5)
                    {
                        // Every other body has run first: 6..20 finish before 5 fails, and so do 0..4 (a worker that claimed one
                        // of them and was descheduled before its body started would otherwise start nothing after the stop).
                        await allOthersDone.Task.WaitAsync(ct);
                        throw new InvalidOperationException("item 5");
                    }

                    if (i > 5)
                    {
                        Interlocked.Increment(ref laterDone);
                    }

                    if (Interlocked.Increment(ref othersDone) == count - 1)
                    {
                        allOthersDone.SetResult();
                    }

                    return i;
                },
                new FanOutOptions { Limit = ConcurrencyLimit.Fixed(count), Ordered = true, CommittedPrefix = prefix }))
            {
                seen.Add(r);
            }
        }).WaitAsync(Wait.Timeout);

        Assert.Equal("item 5", error.Message);
        Assert.Equal([0, 1, 2, 3, 4], seen);
        Assert.Equal(count - 6, laterDone);
        Assert.Equal(5, prefix.Length);
    }

    [Fact]
    public async Task FanOutStream_Ordered_PrefixCountsAnItemOnceTheConsumerComesBackForTheNext()
    {
        var prefix = new CommittedPrefix();
        var seenWhileHandling = new List<long>();
        await foreach (var r in Enumerable.Range(0, 300).FanOutStream(
            async (i, ct) =>
            {
                await Task.Yield();
                return i;
            },
            new FanOutOptions { Limit = ConcurrencyLimit.Fixed(8), Ordered = true, CommittedPrefix = prefix }).WithCancellation(CancellationToken.None))
        {
            seenWhileHandling.Add(prefix.Length); // item r is being handled: the prefix covers 0..r-1
        }

        Assert.Equal(Enumerable.Range(0, 300).Select(i => (long)i), seenWhileHandling);
        Assert.Equal(300, prefix.Length); // the end of the stream counts the last item
    }

    [Fact]
    public async Task FanOutStream_OrderedRunAll_PrefixStopsAtTheFirstFailureWhileTheStreamGoesOn()
    {
        var prefix = new CommittedPrefix();
        var seen = new List<(int Item, long Prefix)>();
        var error = await Assert.ThrowsAsync<FanOutException>(async () =>
        {
            await foreach (var r in Enumerable.Range(0, 10).FanOutStream(
                (i, _) => i is 3 or 7 ? throw new InvalidOperationException($"item {i}") : new ValueTask<int>(i),
                new FanOutOptions { Limit = ConcurrencyLimit.Fixed(4), Ordered = true, Errors = ErrorMode.RunAll, CommittedPrefix = prefix }))
            {
                seen.Add((r, prefix.Length));
            }
        }).WaitAsync(Wait.Timeout);

        Assert.Equal([3L, 7L], error.Failures.Select(f => f.Index));
        Assert.Equal([(0, 0L), (1, 1), (2, 2), (4, 3), (5, 3), (6, 3), (8, 3), (9, 3)], seen);
        Assert.Equal(3, prefix.Length);
    }

    [Fact]
    public async Task FanOutOutcomes_Ordered_FailureIsYieldedAndEndsThePrefix()
    {
        var prefix = new CommittedPrefix();
        var seen = new List<(long Index, bool Succeeded, long Prefix)>();
        await foreach (var outcome in Enumerable.Range(0, 6).FanOutOutcomes(
            (i, _) => i == 2 ? throw new InvalidOperationException("item 2") : new ValueTask<int>(i),
            new FanOutOptions { Limit = ConcurrencyLimit.Fixed(3), Ordered = true, CommittedPrefix = prefix }).WithCancellation(CancellationToken.None))
        {
            seen.Add((outcome.Index, outcome.Succeeded, prefix.Length));
        }

        Assert.Equal([(0L, true, 0L), (1, true, 1), (2, false, 2), (3, true, 2), (4, true, 2), (5, true, 2)], seen);
        Assert.Equal(2, prefix.Length);
    }

    [Fact]
    public async Task FanOutStream_ConsumerThrowsWhileHandlingAnItem_PrefixDoesNotCoverIt()
    {
        var prefix = new CommittedPrefix();
        await Assert.ThrowsAsync<ApplicationException>(async () =>
        {
            await foreach (var r in Enumerable.Range(0, 10).FanOutStream(
                (i, _) => new ValueTask<int>(i),
                new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2), Ordered = true, CommittedPrefix = prefix }))
            {
                if (r == 4)
                {
                    throw new ApplicationException("the consumer failed on item 4");
                }
            }
        }).WaitAsync(Wait.Timeout);

        Assert.Equal(4, prefix.Length);
    }

    [Fact]
    public async Task FanOutStream_PrefixReadFromAnotherThread_NeverCoversAnItemStillBeingHandled()
    {
        const int count = 3000;
        var prefix = new CommittedPrefix();
        var handled = 0L;
        using var done = new CancellationTokenSource();
        var reader = Task.Run(() =>
        {
            var last = 0L;
            var violations = 0;
            while (!done.IsCancellationRequested)
            {
                var length = prefix.Length;           // read the prefix first...
                var finished = Volatile.Read(ref handled); // ...then what the consumer had finished by then
                if (length > finished || length < last)
                {
                    violations++;
                }

                last = length;
            }

            return violations;
        });

        await foreach (var r in Enumerable.Range(0, count).FanOutStream(
            (i, _) => new ValueTask<int>(i),
            new FanOutOptions { Limit = ConcurrencyLimit.Fixed(4), Ordered = true, CommittedPrefix = prefix }).WithCancellation(CancellationToken.None))
        {
            Volatile.Write(ref handled, r + 1L);
        }

        done.Cancel();
        Assert.Equal(0, await reader.WaitAsync(Wait.Timeout));
        Assert.Equal(count, prefix.Length);
    }

    [Fact]
    public async Task FanOutStream_SecondEnumeration_StartsFromZeroAgain()
    {
        var prefix = new CommittedPrefix();
        var stream = Enumerable.Range(0, 5).FanOutStream(
            (i, _) => new ValueTask<int>(i),
            new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2), Ordered = true, CommittedPrefix = prefix });
        await foreach (var _ in stream.WithCancellation(CancellationToken.None))
        {
        }

        Assert.Equal(5, prefix.Length);
        var first = -1L;
        await foreach (var r in stream.WithCancellation(CancellationToken.None))
        {
            first = first < 0 ? prefix.Length : first;
        }

        Assert.Equal(0, first);
    }

    [Fact]
    public void FanOutStream_CommittedPrefixWithoutOrdered_ThrowsNamingIt()
    {
        var error = Assert.Throws<ArgumentException>(() => Enumerable.Range(0, 5).FanOutStream(
            (i, _) => new ValueTask<int>(i),
            new FanOutOptions { CommittedPrefix = new CommittedPrefix() }));

        Assert.Equal(nameof(FanOutOptions.CommittedPrefix), error.ParamName);
        Assert.Contains("Ordered", error.Message);
    }
}
