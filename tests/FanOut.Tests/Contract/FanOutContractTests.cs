using FanOut.Tests.Infrastructure;

namespace FanOut.Tests.Contract;

/// <summary>
/// The semantics every entry point shares (one test per line of the spec). Each subclass runs them through one overload and
/// one kind of source; items are 0..n-1 and bodies return item * 10, so a result names its item.
/// </summary>
public abstract class FanOutContractTests
{
    /// <summary>Runs <paramref name="body"/> over the probe's items through the entry point under test; results by item index.</summary>
    protected abstract Task<int[]> RunAsync(SourceProbe source, Func<int, CancellationToken, ValueTask<int>> body, FanOutOptions? options, CancellationToken cancellationToken);

    /// <summary>Calls the entry point with a null source and with a null body.</summary>
    protected abstract void CallWithNulls(bool nullSource);

    /// <summary>False for streams, which surface the first exception the way <c>await</c> does.</summary>
    protected virtual bool ReportsEveryException => true;

    protected static FanOutOptions FixedLimit(int limit, ErrorMode errors = ErrorMode.FailFast) =>
        new() { Limit = ConcurrencyLimit.Fixed(limit), Errors = errors };

    [Fact]
    public void FanOut_NullSourceOrBody_ThrowsArgumentNullExceptionNamingIt()
    {
        Assert.Equal("source", Assert.Throws<ArgumentNullException>(() => CallWithNulls(nullSource: true)).ParamName);
        Assert.Equal("body", Assert.Throws<ArgumentNullException>(() => CallWithNulls(nullSource: false)).ParamName);
    }

    [Fact]
    public async Task FanOut_AlreadyCanceledToken_CanceledWithoutEnumeratingOrRunningBodies()
    {
        var source = new SourceProbe(10);
        var ran = 0;
        var task = RunAsync(source, (i, _) => { Interlocked.Increment(ref ran); return new(i); }, null, new CancellationToken(canceled: true));

        await task.Settled();
        Assert.True(task.IsCanceled);
        Assert.Equal(0, source.GetEnumeratorCalls);
        Assert.Equal(0, ran);
    }

    [Fact]
    public async Task FanOut_FixedLimitWithMoreItems_InFlightReachesButNeverExceedsLimit()
    {
        const int limit = 4;
        var probe = new ConcurrencyProbe();
        var reached = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await RunAsync(new SourceProbe(40), async (i, ct) =>
        {
            probe.Enter();
            if (probe.Current >= limit)
            {
                reached.TrySetResult();
            }

            // The first items wait until the limit is reached, so reaching it is proven, not hoped for.
            await reached.Task.WaitAsync(Wait.Timeout, ct);
            probe.Exit();
            return i * 10;
        }, FixedLimit(limit), default).WithTimeout();

        Assert.Equal(limit, probe.Max);
    }

    [Fact]
    public async Task FanOut_LimitSharedByConcurrentCalls_SumInFlightStaysWithinIt()
    {
        var shared = new FanOutOptions { Limit = ConcurrencyLimit.Fixed(3) };
        var probe = new ConcurrencyProbe();
        async ValueTask<int> Body(int i, CancellationToken ct)
        {
            probe.Enter();
            await Task.Delay(1, ct);
            probe.Exit();
            return i * 10;
        }

        await Task.WhenAll(
            RunAsync(new SourceProbe(30), Body, shared, default),
            RunAsync(new SourceProbe(30), Body, shared, default),
            RunAsync(new SourceProbe(30), Body, shared, default)).WithTimeout();

        Assert.InRange(probe.Max, 1, 3);
        Assert.Equal(90, probe.Started);
    }

    [Fact]
    public async Task FanOut_ManyItems_EachRunsExactlyOnceAndResultMatchesItsIndex()
    {
        const int count = 2000;
        var runs = new int[count];
        var results = await RunAsync(new SourceProbe(count), async (i, _) =>
        {
            Interlocked.Increment(ref runs[i]);
            if (i % 3 == 0)
            {
                await Task.Yield(); // mix synchronous and asynchronous completions
            }

            return i * 10;
        }, FixedLimit(8), default).WithTimeout();

        Assert.All(runs, r => Assert.Equal(1, r));
        Assert.Equal(Enumerable.Range(0, count).Select(i => i * 10), results);
    }

    [Fact]
    public async Task FanOut_SynchronousBodies_CallReturnsBeforeAnyBodyRunsOffTheCallersThread()
    {
        var callerThread = Environment.CurrentManagedThreadId;
        using var returned = new ManualResetEventSlim();
        var sawReturn = true;
        var onCaller = false;
        var task = RunAsync(new SourceProbe(20), (i, _) =>
        {
            // If a body ran inside the call, the call could not return and this wait would time out.
            sawReturn &= returned.Wait(Wait.Timeout);
            onCaller |= Environment.CurrentManagedThreadId == callerThread;
            return new(i * 10);
        }, FixedLimit(2), default);
        returned.Set();
        await task.WithTimeout();

        Assert.True(sawReturn);
        Assert.False(onCaller);
    }

    [Fact]
    public async Task FanOut_CpuBoundSynchronousBodies_RunInParallelOnThePool()
    {
        var probe = new ConcurrencyProbe();
        var allOnPool = true;
        await RunAsync(new SourceProbe(8), (i, _) =>
        {
            allOnPool &= Thread.CurrentThread.IsThreadPoolThread;
            probe.Enter();
            // Spin (no await) until another body runs at the same time: only true parallelism ends this.
            SpinWait.SpinUntil(() => probe.Max >= 2, Wait.Timeout);
            probe.Exit();
            return new(i * 10);
        }, FixedLimit(2), default).WithTimeout();

        Assert.True(allOnPool);
        Assert.Equal(2, probe.Max);
    }

    [Fact]
    public async Task FanOut_EveryBody_GetsTheSameTokenCanceledWithTheCaller()
    {
        using var cts = new CancellationTokenSource();
        var tokens = new System.Collections.Concurrent.ConcurrentBag<CancellationToken>();
        var started = 0;
        var task = RunAsync(new SourceProbe(100), async (i, ct) =>
        {
            tokens.Add(ct);
            if (Interlocked.Increment(ref started) == 3)
            {
                await cts.CancelAsync();
            }

            await Task.Delay(Timeout.Infinite, ct);
            return i;
        }, FixedLimit(3), cts.Token);

        await task.Settled();
        Assert.True(task.IsCanceled);
        Assert.Single(tokens.Distinct());
        Assert.True(tokens.First().IsCancellationRequested);
        Assert.NotEqual(cts.Token, tokens.First()); // the run's own token, linked to the caller's
    }

    [Fact]
    public async Task FanOut_FailFastFirstFailure_StopsNewItemsCancelsTokenAndWaitsForInFlight()
    {
        var started = new System.Collections.Concurrent.ConcurrentBag<int>();
        var slowFinished = false;
        var tokenCanceledInSlow = false;
        var task = RunAsync(new SourceProbe(1000), async (i, ct) =>
        {
            started.Add(i);
            if (i == 0)
            {
                // In flight when item 1 fails: must be awaited, and must see its token canceled.
                try
                {
                    await Task.Delay(Timeout.Infinite, ct);
                }
                catch (OperationCanceledException)
                {
                    tokenCanceledInSlow = true;
                    await Task.Delay(20, CancellationToken.None);
                    slowFinished = true;
                    throw;
                }
            }

            if (i == 1)
            {
                throw new InvalidOperationException("item 1");
            }

            return i;
        }, FixedLimit(2), default);

        await task.Settled();
        Assert.True(task.IsFaulted);
        Assert.True(slowFinished);
        Assert.True(tokenCanceledInSlow);
        Assert.Equal(new[] { 0, 1 }, started.Order());
        Assert.IsType<InvalidOperationException>(task.Exception!.InnerExceptions[0]);
    }

    [Fact]
    public async Task FanOut_FailFastSeveralFailures_FaultsWithEveryException()
    {
        var barrier = new Barrier(3);
        var task = RunAsync(new SourceProbe(3), (i, _) =>
        {
            barrier.SignalAndWait(Wait.Timeout); // all three fail together
            throw new InvalidOperationException($"item {i}");
        }, FixedLimit(3), default);

        await task.Settled();
        Assert.True(task.IsFaulted);
        var messages = task.Exception!.InnerExceptions.Select(e => e.Message).Order().ToArray();
        if (ReportsEveryException)
        {
            Assert.Equal(new[] { "item 0", "item 1", "item 2" }, messages);
        }
        else
        {
            Assert.StartsWith("item ", Assert.Single(messages));
        }
    }

    [Fact]
    public async Task FanOut_RunAllWithFailures_EveryItemRunsAndFailuresAreTiedToIndices()
    {
        var ran = 0;
        var task = RunAsync(new SourceProbe(50), (i, _) =>
        {
            Interlocked.Increment(ref ran);
            return i % 10 == 3 ? throw new InvalidOperationException($"item {i}") : new ValueTask<int>(i * 10);
        }, FixedLimit(4, ErrorMode.RunAll), default);

        await task.Settled();
        Assert.Equal(50, ran);
        var error = Assert.IsAssignableFrom<FanOutException>(Assert.Single(task.Exception!.InnerExceptions));
        Assert.Equal(new long[] { 3, 13, 23, 33, 43 }, error.Failures.Select(f => f.Index));
        Assert.All(error.Failures, f => Assert.Equal($"item {f.Index}", f.Exception.Message));
        Assert.Equal(50, error.ItemCount);
    }

    [Fact]
    public async Task FanOut_CallerCancelsWhileBodiesThrow_CanceledNotFaulted()
    {
        using var cts = new CancellationTokenSource();
        var started = 0;
        var task = RunAsync(new SourceProbe(100), async (i, ct) =>
        {
            if (Interlocked.Increment(ref started) == 2)
            {
                await cts.CancelAsync();
            }

            await Task.Delay(Timeout.Infinite, ct).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            throw new InvalidOperationException("body failed after cancellation");
        }, FixedLimit(2, ErrorMode.RunAll), cts.Token);

        await task.Settled();
        Assert.True(task.IsCanceled);
    }

    [Fact]
    public async Task FanOut_CallerSetsAsyncLocal_BodiesSeeIt()
    {
        var local = new AsyncLocal<string>();
        local.Value = "from caller";
        var seen = new System.Collections.Concurrent.ConcurrentBag<string?>();
        await RunAsync(new SourceProbe(20), async (i, _) =>
        {
            await Task.Yield();
            seen.Add(local.Value);
            return i;
        }, FixedLimit(4), default).WithTimeout();

        Assert.Equal(20, seen.Count);
        Assert.All(seen, v => Assert.Equal("from caller", v));
    }

    [Fact]
    public async Task FanOut_TaskCompletes_NoBodyStillRunning()
    {
        var probe = new ConcurrencyProbe();
        var task = RunAsync(new SourceProbe(200), async (i, ct) =>
        {
            probe.Enter();
            try
            {
                await Task.Delay(i % 7, ct);
                return i % 50 == 49 ? throw new InvalidOperationException() : i;
            }
            finally
            {
                probe.Exit();
            }
        }, FixedLimit(8), default);

        await task.Settled();
        Assert.Equal(0, probe.Current);
    }
}
