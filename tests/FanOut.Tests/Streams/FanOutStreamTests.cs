using FanOut.Tests.Infrastructure;

namespace FanOut.Tests.Streams;

public sealed class FanOutStreamTests
{
    [Fact]
    public async Task FanOutStream_ConsumerBreaksEarly_CancelsAndAwaitsItemsInFlight()
    {
        var probe = new ConcurrencyProbe();
        var canceledBodies = 0;
        var consumed = 0;
        await foreach (var _ in new SourceProbe(1000).AsEnumerable().FanOutStream(async (i, ct) =>
        {
            probe.Enter();
            try
            {
                if (i >= 3)
                {
                    await Task.Delay(Timeout.Infinite, ct);
                }

                return i;
            }
            catch (OperationCanceledException)
            {
                Interlocked.Increment(ref canceledBodies);
                throw;
            }
            finally
            {
                probe.Exit();
            }
        }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(4) }))
        {
            if (++consumed == 3)
            {
                await Wait.UntilAsync(() => probe.Current == 4, "the limit is in flight");
                break;
            }
        }

        // Leaving the loop disposed the enumerator, which returned only after the items in flight were canceled and done.
        Assert.Equal(0, probe.Current);
        Assert.Equal(4, canceledBodies);
    }

    [Fact]
    public async Task FanOutStream_OrderedWithSlowFirstItem_HoldsBackABoundedNumberOfResults()
    {
        var releaseFirst = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var finished = 0;
        var yielded = new List<int>();
        var options = new FanOutOptions { Limit = ConcurrencyLimit.Fixed(4), Ordered = true };
        var stream = new SourceProbe(100_000).AsEnumerable().FanOutStream(async (i, ct) =>
        {
            if (i == 0)
            {
                await releaseFirst.Task.WaitAsync(ct);
            }

            Interlocked.Increment(ref finished);
            return i;
        }, options);

        var consumer = Task.Run(async () =>
        {
            await foreach (var value in stream)
            {
                yielded.Add(value);
            }
        });

        // Let the workers run ahead of the blocked first item until the window stops them.
        var last = -1;
        await Wait.UntilAsync(() => { var now = Volatile.Read(ref finished); var stable = now == last && now > 0; last = now; Thread.Sleep(20); return stable; }, "the workers stall");
        var heldBack = Volatile.Read(ref finished);
        releaseFirst.SetResult();
        await consumer.WithTimeout();

        Assert.InRange(heldBack, 4, 64); // the window (64 for a limit of 4), not the 100,000 items
        Assert.Equal(Enumerable.Range(0, 100_000), yielded);
    }

    [Fact]
    public async Task FanOutStream_EndlessAsyncSource_RunsInBoundedMemory()
    {
        var source = new SourceProbe(0) { Endless = true };
        var consumed = 0;
        await foreach (var _ in source.AsAsyncEnumerable().FanOutStream((i, _) => new ValueTask<int>(i), new FanOutOptions { Limit = ConcurrencyLimit.Fixed(4) }))
        {
            if (++consumed == 2000)
            {
                await Task.Delay(50); // a slow consumer: the workers must stop, not buffer
                break;
            }
        }

        // Pulled = consumed + what the bounded channel (1,024 results) and the items in flight hold.
        Assert.InRange(source.Pulled, 2000, 2000 + FanOut.Execution.StreamRun<int, int>.MinChannelCapacity + 8);
        Assert.Equal(1, source.Disposed);
    }

    [Fact]
    public async Task FanOutStream_RunAll_YieldsSuccessesThenThrowsFanOutException()
    {
        var yielded = new List<int>();
        var error = await Assert.ThrowsAsync<FanOutException>(async () =>
        {
            await foreach (var value in Enumerable.Range(0, 20).FanOutStream(
                (i, _) => i == 5 ? throw new InvalidOperationException() : new ValueTask<int>(i),
                new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2), Errors = ErrorMode.RunAll, Ordered = true }))
            {
                yielded.Add(value);
            }
        });

        Assert.Equal(Enumerable.Range(0, 20).Where(i => i != 5), yielded);
        Assert.Equal(5, Assert.Single(error.Failures).Index);
    }

    [Fact]
    public async Task FanOutStream_NotEnumerated_RunsNothing()
    {
        var ran = 0;
        _ = Enumerable.Range(0, 10).FanOutStream((i, _) => { Interlocked.Increment(ref ran); return new ValueTask<int>(i); });
        await Task.Delay(20);
        Assert.Equal(0, ran);
    }
}
