using System.Collections;
using System.Collections.Concurrent;
using System.Threading.Channels;

using FanOut.Execution;
using FanOut.Sources;
using FanOut.Tests.Infrastructure;

namespace FanOut.Tests.Hardening;

/// <summary>
/// One test per promise that broke under faults, sharing or early exits (issue "library hardening", items 1-14; items 3
/// and 4 live with the adaptive limit's tests). Each failed on the code before the fix.
/// </summary>
public sealed class PromiseRegressionTests
{
    [Fact]
    public async Task SharedLimitHeldWhileIdle_QuietSourceHoldsNoPermit_OtherCallProgresses()
    {
        var limit = ConcurrencyLimit.Fixed(4);
        var options = new FanOutOptions { Limit = limit };
        var feed = Channel.CreateUnbounded<int>();
        for (var i = 0; i < 16; i++)
        {
            feed.Writer.TryWrite(i);
        }

        using var stopA = new CancellationTokenSource();
        var ranA = 0;
        var callA = feed.Reader.ReadAllAsync().FanOutAsync((i, _) => { Interlocked.Increment(ref ranA); return ValueTask.CompletedTask; }, options, stopA.Token);
        await Wait.UntilAsync(() => Volatile.Read(ref ranA) == 16, "call A ran its burst");

        // A's source is quiet now: its workers wait for an item, and must hold no permit meanwhile.
        await Wait.UntilAsync(() => limit.InFlight == 0, "call A gave its permits back");
        var resultsB = await Enumerable.Range(0, 40).ToArray().FanOutAsync((i, _) => new ValueTask<int>(i), options).WithTimeout();

        Assert.Equal(Enumerable.Range(0, 40), resultsB);
        await stopA.CancelAsync();
        await callA.Settled();
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public async Task SharedLimitHeldWhileIdle_StreamConsumerUsesSameLimit_NoDeadlock()
    {
        // The stream's workers must not hold their permits while the consumer (which needs the same limit) lags.
        var options = new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2) };
        var consumed = 0;
        var run = Task.Run(async () =>
        {
            await foreach (var value in Enumerable.Range(0, 300).ToArray().FanOutStream((i, _) => new ValueTask<int>(i), options))
            {
                await new[] { value, value + 1 }.FanOutAsync((x, _) => new ValueTask<int>(x), options);
                consumed++;
            }
        });

        await run.WithTimeout();
        Assert.Equal(300, consumed);
    }

    [Fact]
    public async Task StreamAbandonsRunningBody_ConsumerBreaks_DisposeAwaitsEveryBodyAndPermit()
    {
        var limit = ConcurrencyLimit.Fixed(3);
        var finished = 0;
        var started = 0;
        await foreach (var _ in Enumerable.Range(0, 100).ToArray().FanOutStream(async (i, ct) =>
        {
            Interlocked.Increment(ref started);
            try
            {
                if (i > 0)
                {
                    await Task.Delay(Timeout.Infinite, ct);
                }

                return i;
            }
            finally
            {
                // Cleanup that outlives the cancellation: DisposeAsync must still wait for it.
                Thread.Sleep(20);
                Interlocked.Increment(ref finished);
            }
        }, new FanOutOptions { Limit = limit }))
        {
            await Wait.UntilAsync(() => limit.InFlight == 3, "the limit is in flight");
            break;
        }

        Assert.Equal(Volatile.Read(ref started), Volatile.Read(ref finished));
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public async Task ObjectDisposedOnEarlyBreak_OneItemStreamsBrokenAtOnce_NeverThrow()
    {
        for (var round = 0; round < 20_000; round++)
        {
            await foreach (var _ in new[] { round }.FanOutStream((i, _) => new ValueTask<int>(i), new FanOutOptions { Limit = ConcurrencyLimit.Fixed(1) }))
            {
                break;
            }
        }
    }

    [Fact]
    public async Task FinishedResultsHeldBack_BlockingSourceWaits_ResultsAlreadyFinishedReachTheConsumer()
    {
        using var items = new BlockingCollection<int>();
        for (var i = 0; i < 3; i++)
        {
            items.Add(i);
        }

        var received = new ConcurrentQueue<int>();
        var consumer = Task.Run(async () =>
        {
            await foreach (var value in items.GetConsumingEnumerable().FanOutStream((i, _) => new ValueTask<int>(i), new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2) }))
            {
                received.Enqueue(value);
            }
        });

        // The source now blocks in MoveNext; the three results already finished must not wait for it.
        await Wait.UntilAsync(() => received.Count == 3, "the finished results reached the consumer");
        items.CompleteAdding();
        await consumer.WithTimeout();
        Assert.Equal([0, 1, 2], received.Order());
    }

    [Fact]
    public async Task FinishedResultsHeldBack_LongSynchronousBody_EarlierResultsArePublishedFirst()
    {
        using var release = new ManualResetEventSlim();
        var received = new ConcurrentQueue<int>();
        var consumer = Task.Run(async () =>
        {
            await foreach (var value in Enumerable.Range(0, 5).ToArray().FanOutStream((i, _) =>
            {
                if (i == 4)
                {
                    release.Wait(Wait.Timeout); // a long synchronous body on the worker that produced 0..3
                }

                return new ValueTask<int>(i);
            }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(1) }))
            {
                received.Enqueue(value);
            }
        });

        await Wait.UntilAsync(() => received.Count == 4, "results 0..3 reached the consumer while item 4 runs");
        release.Set();
        await consumer.WithTimeout();
        Assert.Equal(5, received.Count);
    }

    [Fact]
    public async Task RunAllEndlessStreamKeepsEveryFailure_StreamKeepsBoundedSummary()
    {
        const int count = 20_000;
        var stream = Enumerable.Range(0, count).Select(i => i).FanOutStream<int, int>(
            (i, _) => throw new InvalidOperationException($"item {i}"),
            new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2), Errors = ErrorMode.RunAll });

        var error = await Assert.ThrowsAsync<FanOutException>(async () =>
        {
            await foreach (var _ in stream)
            {
            }
        });

        Assert.Equal(count, error.FailureCount);
        Assert.Equal(count, error.ItemCount);
        Assert.Equal(FanOutException.FanOutStreamRetainedFailures, error.Failures.Count);
        Assert.Equal(error.Failures.OrderBy(f => f.Index), error.Failures);
    }

    [Fact]
    public async Task RunAllEndlessStreamKeepsEveryFailure_OutcomesSurfaceEachFailureAsItHappens()
    {
        using var cts = new CancellationTokenSource();
        var seen = 0L;
        var failures = 0L;
        var endless = new SourceProbe(0) { Endless = true }.AsAsyncEnumerable();
        var consume = async () =>
        {
            await foreach (var outcome in endless.FanOutOutcomes(
                (i, _) => i % 2 == 0 ? throw new InvalidOperationException($"item {i}") : new ValueTask<int>(i),
                new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2) },
                cts.Token))
            {
                Assert.Equal(outcome.Index % 2 == 0, !outcome.Succeeded);
                if (!outcome.Succeeded)
                {
                    Assert.Equal($"item {outcome.Index}", outcome.Exception!.Message);
                    failures++;
                }
                else
                {
                    Assert.Equal(outcome.Index, outcome.Result);
                }

                if (++seen == 10_000)
                {
                    await cts.CancelAsync();
                }
            }
        };

        await Assert.ThrowsAnyAsync<OperationCanceledException>(consume);
        Assert.InRange(failures, 4_000, 6_000);
    }

    [Fact]
    public async Task IndexOverflowPastIntMaxValue_OrderedStreamAndFailures_KeepExactIndices()
    {
        const long first = int.MaxValue - 5L;
        var source = new EnumerableSource<long>(Enumerable.Range(0, 10).Select(i => first + i), firstIndex: first);
        var run = new StreamRun<long, long>(
            source,
            (item, _) => item % 3 == 0 ? throw new InvalidOperationException() : new ValueTask<long>(item),
            new FanOutOptions { Limit = ConcurrencyLimit.Fixed(3), Ordered = true },
            yieldFailures: true,
            CancellationToken.None);
        run.Start();

        var outcomes = new List<FanOutOutcome<long>>();
        var ordered = run.Ordered!;
        while (true)
        {
            while (ordered.TryTake(out var outcome, out var hasValue))
            {
                Assert.True(hasValue);
                outcomes.Add(outcome);
            }

            if (!await ordered.WaitAsync().WithTimeout())
            {
                break;
            }
        }

        await run.Completion.WithTimeout();
        Assert.Equal(Enumerable.Range(0, 10).Select(i => first + i), outcomes.Select(o => o.Index));
        Assert.All(outcomes, o => Assert.Equal(o.Index % 3 != 0, o.Succeeded));
        Assert.Contains(outcomes, o => o.Index > int.MaxValue && !o.Succeeded);
    }

    [Fact]
    public async Task IndexOverflowPastIntMaxValue_RunAllFailures_KeepExactIndices()
    {
        const long first = int.MaxValue - 2L;
        var source = new EnumerableSource<long>(Enumerable.Range(0, 6).Select(i => first + i), firstIndex: first);
        var run = new ActionRun<long>(
            source,
            (item, _) => item > int.MaxValue ? throw new InvalidOperationException() : ValueTask.CompletedTask,
            new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2), Errors = ErrorMode.RunAll },
            CancellationToken.None);
        run.Start();

        await run.Task.Settled();
        var error = Assert.IsType<FanOutException>(run.Task.Exception!.InnerException);
        Assert.Equal(new[] { first + 3, first + 4, first + 5 }, error.Failures.Select(f => f.Index));
    }

    [Fact]
    public async Task DisposeFailureHidesRunAllException_FanOutExceptionComesFirstAndCarriesIt()
    {
        var source = new SourceProbe(10) { ThrowOnDispose = true };
        var task = source.AsEnumerable().FanOutAsync(
            (i, _) => i == 4 ? throw new InvalidOperationException("body") : new ValueTask<int>(i * 2),
            new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2), Errors = ErrorMode.RunAll });

        var error = await Assert.ThrowsAsync<FanOutException<int>>(() => task.WithTimeout());

        Assert.Equal(4, Assert.Single(error.Failures).Index);
        Assert.Single(error.SourceExceptions);
        Assert.Equal(18, error.Results[9]);
        Assert.Equal(1, source.Disposed);
    }

    [Fact]
    public async Task ThrowingIsOverloadBreaksRunAll_PredicateFailure_ItemFailureKeptAndRunGoesOn()
    {
        var predicateError = new InvalidOperationException("predicate");
        var limit = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { IsOverload = _ => throw predicateError });
        var ran = new int[200];
        var task = Enumerable.Range(0, 200).ToArray().FanOutAsync(
            async (i, _) =>
            {
                Interlocked.Increment(ref ran[i]);
                await Task.Yield();
                return i % 50 == 7 ? throw new TimeoutException($"item {i}") : i;
            },
            new FanOutOptions { Limit = limit, Errors = ErrorMode.RunAll });

        var error = await Assert.ThrowsAsync<FanOutException<int>>(() => task.WithTimeout());

        Assert.All(ran, r => Assert.Equal(1, r));
        Assert.Equal(new long[] { 7, 57, 107, 157 }, error.Failures.Select(f => f.Index));
        Assert.All(error.Failures, f => Assert.IsType<TimeoutException>(f.Exception));
        Assert.All(error.Failures, f => Assert.Same(predicateError, f.CallbackException));
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public async Task BlockedBodyStrandsItems_AsyncBodyWaitsForLaterItem_Completes()
    {
        var later = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var results = await Enumerable.Range(0, 1000).ToArray().FanOutAsync(async (i, _) =>
        {
            if (i == 300)
            {
                await later.Task;
            }
            else if (i == 301)
            {
                later.TrySetResult();
            }

            return i;
        }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2) }).WithTimeout();

        Assert.Equal(Enumerable.Range(0, 1000), results);
    }

    [Fact]
    public async Task BlockedBodyStrandsItems_SynchronousBodyBlocksOnLaterItem_Completes()
    {
        using var later = new ManualResetEventSlim();
        var waited = false;
        var results = await Enumerable.Range(0, 1000).ToArray().FanOutAsync((i, _) =>
        {
            if (i == 300)
            {
                waited = later.Wait(Wait.Timeout);
            }
            else if (i == 301)
            {
                later.Set();
            }

            return new ValueTask<int>(i);
        }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2) }).WithTimeout();

        Assert.True(waited, "item 301 ran while item 300 blocked its worker");
        Assert.Equal(Enumerable.Range(0, 1000), results);
    }

    [Fact]
    public async Task NullEnumerator_SyncAndAsyncSources_FaultWithInvalidOperationException()
    {
        var sync = new NullEnumerable().FanOutAsync((i, _) => new ValueTask<int>(i));
        var async = new NullAsyncEnumerable().FanOutAsync((i, _) => new ValueTask<int>(i));

        await Assert.ThrowsAsync<InvalidOperationException>(() => sync.WithTimeout());
        await Assert.ThrowsAsync<InvalidOperationException>(() => async.WithTimeout());
    }

    [Fact]
    public async Task ListCountThrows_ComesBackAsFaultedTask_CanceledTokenStillWins()
    {
        Task<int[]>? task = null;
        var call = Record.Exception(() => { task = new ThrowingCountList().FanOutAsync((i, _) => new ValueTask<int>(i)); });
        Assert.Null(call);
        await Assert.ThrowsAsync<NotSupportedException>(() => task!.WithTimeout());

        var canceled = new ThrowingCountList().FanOutAsync((i, _) => ValueTask.CompletedTask, cancellationToken: new CancellationToken(true));
        await canceled.Settled();
        Assert.True(canceled.IsCanceled);
    }

    [Fact]
    public async Task DisposeFailureDoesNotCancelToken_FailFast_EnumeratorTokenCanceled()
    {
        var source = new SourceProbe(5) { ThrowOnDispose = true };
        var task = source.AsAsyncEnumerable().FanOutAsync((i, _) => new ValueTask<int>(i), new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2) });

        await task.Settled();
        Assert.True(task.IsFaulted);
        Assert.True(source.EnumeratorToken.IsCancellationRequested, "the run's token learned of the source's failure");
    }

    private sealed class NullEnumerable : IEnumerable<int>
    {
        public IEnumerator<int> GetEnumerator() => null!;

        IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();
    }

    private sealed class NullAsyncEnumerable : IAsyncEnumerable<int>
    {
        public IAsyncEnumerator<int> GetAsyncEnumerator(CancellationToken cancellationToken = default) => null!;
    }

    private sealed class ThrowingCountList : IList<int>
    {
        public int Count => throw new NotSupportedException("Count");

        public bool IsReadOnly => true;

        public int this[int index] { get => index; set => throw new NotSupportedException(); }

        public IEnumerator<int> GetEnumerator() => throw new NotSupportedException();

        IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();

        public int IndexOf(int item) => throw new NotSupportedException();

        public void Insert(int index, int item) => throw new NotSupportedException();

        public void RemoveAt(int index) => throw new NotSupportedException();

        public void Add(int item) => throw new NotSupportedException();

        public void Clear() => throw new NotSupportedException();

        public bool Contains(int item) => throw new NotSupportedException();

        public void CopyTo(int[] array, int arrayIndex) => throw new NotSupportedException();

        public bool Remove(int item) => throw new NotSupportedException();
    }
}
