using FanOut.Conformance.Tests.Infrastructure;

namespace FanOut.Conformance.Tests;

/// <summary>
/// Parallel.ForEachAsync's Cancellation_* tests: the caller's cancellation ends the call Canceled (never Faulted) with the
/// caller's token, and wins over body exceptions; an <see cref="OperationCanceledException"/> a body throws for any other
/// reason is a failure like any other; every body gets one token, linked to the caller's but not the caller's own.
/// </summary>
public sealed class CancellationTests
{
    public static TheoryData<Api, SourceKind> Everything => Matrix.Everything;

    public static TheoryData<Api, SourceKind> Failing => Matrix.Failing;

    public static TheoryData<Api, SourceKind> Enumerated => Matrix.Enumerated;

    public static TheoryData<Api, SourceKind, int> TaskCallsByThrowingCount => Matrix.Cross(Matrix.TaskApis, [SourceKind.Array, SourceKind.Lazy, SourceKind.Async], [0, 1, 2, 3, 4]);

    public static TheoryData<SourceKind> Sources => [.. Matrix.AllSources];

    [Theory]
    [MemberData(nameof(Everything))]
    public async Task Call_CanceledWhileRunning_EndsCanceledWithCallersToken(Api api, SourceKind kind)
    {
        using var cts = new CancellationTokenSource();
        var tracker = new Tracker();
        var call = FanOutCall.Start(api, ProbeSource.Long(kind), async (item, ct) =>
        {
            tracker.Enter(item, ct);
            try
            {
                // Running, not blocked on the token: from item 10 on a body keeps yielding until the caller has canceled,
                // so the call cannot run through its source before the cancellation (100,000 items of one yield each took
                // 272 ms on a quiet machine, and the test's own continuation came later than that once).
                do
                {
                    await Task.Yield();
                }
                while (item >= 10 && !cts.IsCancellationRequested);

                return item;
            }
            finally
            {
                tracker.Exit();
            }
        }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2) }, cts.Token);

        await tracker.WhenStarted(10).Within();
        await cts.CancelAsync();
        await call.AssertCanceledAsync(cts.Token);

        // Nothing of the call runs after it completed.
        var startedAtEnd = tracker.Started;
        Assert.Equal(0, tracker.Active);
        await Wait.QuietPeriod();
        Assert.Equal(startedAtEnd, tracker.Started);
    }

    /// <summary>Bodies blocked on their token see it canceled; their OperationCanceledExceptions do not turn the call Faulted.</summary>
    [Theory]
    [MemberData(nameof(Everything))]
    public async Task Call_CanceledWhileBodiesBlocked_CancelsBodiesTokenAndEndsCanceled(Api api, SourceKind kind)
    {
        using var cts = new CancellationTokenSource();
        var tracker = new Tracker();
        var call = FanOutCall.Start(api, ProbeSource.Long(kind), tracker.BlockedUntilCanceledAsync, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(3) }, cts.Token);

        await tracker.WhenStarted(3).Within();
        await cts.CancelAsync();
        await call.AssertCanceledAsync(cts.Token);
        Assert.All(tracker.Tokens, static t => Assert.True(t.IsCancellationRequested));
        Assert.Equal(3, tracker.Started);
    }

    /// <summary>Cancellation_HasPriorityOverExceptions: a body cancels the caller's token and then throws; the call is Canceled.</summary>
    [Theory]
    [MemberData(nameof(Everything))]
    public async Task Call_CallerCancelsAndBodyThrows_EndsCanceledNotFaulted(Api api, SourceKind kind)
    {
        using var cts = new CancellationTokenSource();
        var otherStarted = Wait.Gate();
        var call = FanOutCall.Start(api, ProbeSource.Long(kind), async (item, _) =>
        {
            if (item == 0)
            {
                await otherStarted.Task.WaitAsync(Wait.Timeout);
                await cts.CancelAsync();
                throw new FormatException("thrown after the caller canceled");
            }

            otherStarted.TrySetResult();
            await Task.Yield();
            return item;
        }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2) }, cts.Token);

        await call.AssertCanceledAsync(cts.Token);
    }

    /// <summary>
    /// The same when the failure comes first and the caller cancels while the failing call waits for the item still in
    /// flight: what decides is whether the caller's token is canceled when the call completes (Parallel.ForEachAsync's rule).
    /// </summary>
    [Theory]
    [MemberData(nameof(Failing))]
    public async Task Call_BodyThrowsThenCallerCancelsBeforeCompletion_EndsCanceled(Api api, SourceKind kind)
    {
        using var cts = new CancellationTokenSource();
        var tracker = new Tracker();
        var secondStarted = tracker.WhenStarted(2);
        var failed = Wait.Gate();
        var canceled = Wait.Gate();
        var call = FanOutCall.Start(api, ProbeSource.Long(kind), async (item, ct) =>
        {
            tracker.Enter(item, ct);
            if (item == 0)
            {
                await secondStarted.WaitAsync(Wait.Timeout, CancellationToken.None);
                failed.TrySetResult();
                throw new FormatException("first");
            }

            // Hold the call open past the failure until the caller has canceled.
            await canceled.Task.WaitAsync(Wait.Timeout, CancellationToken.None);
            return item;
        }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2) }, cts.Token);

        await failed.Task.Within();
        await Wait.QuietPeriod();
        Assert.False(call.Completion.IsCompleted, "the call completed while a body was still running");
        await cts.CancelAsync();
        canceled.TrySetResult();
        await call.AssertCanceledAsync(cts.Token);
    }

    /// <summary>Cancellation_FaultsForOceForNonCancellation: an OCE for a token nobody canceled is a failure, not a cancellation.</summary>
    [Theory]
    [MemberData(nameof(Failing))]
    public async Task Call_BodyThrowsOperationCanceledWithoutCancellation_Faults(Api api, SourceKind kind)
    {
        foreach (var useBodyToken in new[] { true, false })
        {
            using var cts = new CancellationTokenSource();
            var thrown = new System.Collections.Concurrent.ConcurrentBag<Exception>();
            var call = FanOutCall.Start(api, ProbeSource.Long(kind), (item, ct) =>
            {
                var e = new OperationCanceledException(useBodyToken ? ct : cts.Token);
                thrown.Add(e);
                throw e;
            }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2) }, cts.Token);

            var exceptions = await call.AssertFaultedAsync();
            Assert.False(cts.IsCancellationRequested);
            if (call.ReturnsTask)
            {
                Assert.True(call.Completion.IsFaulted);
                Assert.All(exceptions, static e => Assert.IsAssignableFrom<OperationCanceledException>(e));
            }

            // The bodies' own exceptions, not a cancellation of the call's making (a stream rethrows one of them).
            Assert.NotEmpty(exceptions);
            Assert.All(exceptions, e => Assert.Contains(thrown, t => ReferenceEquals(t, e)));
        }
    }

    /// <summary>FanOutOutcomes: such an OCE is the item's outcome, and the run goes on.</summary>
    [Theory]
    [MemberData(nameof(Sources))]
    public async Task Outcomes_BodyThrowsOperationCanceledWithoutCancellation_YieldsFailedOutcome(SourceKind kind)
    {
        var call = FanOutCall.Start(Api.Outcomes, new ProbeSource(kind, 10), (item, ct) =>
            item % 2 == 0 ? throw new OperationCanceledException(ct) : new ValueTask<int>(item));

        await call.Completion.Within();
        Assert.Equal(10, call.Outcomes.Count);
        Assert.All(call.Outcomes.Where(static o => o.Index % 2 == 0), static o => Assert.IsType<OperationCanceledException>(o.Exception));
        Assert.All(call.Outcomes.Where(static o => o.Index % 2 == 1), static o => Assert.True(o.Succeeded));
    }

    /// <summary>Cancellation_InternalCancellationExceptionsArentFilteredOut: every body's exception is kept, OCEs included.</summary>
    [Theory]
    [MemberData(nameof(TaskCallsByThrowingCount))]
    public async Task Call_SomeBodiesThrowOperationCanceledForTheirToken_KeepsEveryException(Api api, SourceKind kind, int throwingOce)
    {
        const int Total = 4;
        var remaining = Total;
        var allStarted = Wait.Gate();
        var call = FanOutCall.Start(api, new ProbeSource(kind, Total), async (item, ct) =>
        {
            if (Interlocked.Decrement(ref remaining) == 0)
            {
                allStarted.TrySetResult();
            }

            await allStarted.Task.WaitAsync(Wait.Timeout, CancellationToken.None);
            throw item < throwingOce ? new OperationCanceledException(ct) : new FormatException();
        }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(Total) });

        var exceptions = await call.AssertFaultedAsync();
        Assert.Equal(Total, exceptions.Count);
        Assert.Equal(throwingOce, exceptions.Count(static e => e is OperationCanceledException));
    }

    /// <summary>Cancellation_SameTokenPassedToEveryInvocation, and the token is the call's own: linked to the caller's, not it.</summary>
    [Theory]
    [MemberData(nameof(Everything))]
    public async Task Call_BodiesTokens_AreOneCancelableTokenThatIsNotTheCallers(Api api, SourceKind kind)
    {
        using var cts = new CancellationTokenSource();
        var tracker = new Tracker();
        var call = FanOutCall.Start(api, new ProbeSource(kind, 100), tracker.YieldOnceAsync, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(4) }, cts.Token);

        await call.Completion.Within();
        var token = Assert.Single(tracker.Tokens.Distinct());
        Assert.NotEqual(cts.Token, token);
        Assert.True(token.CanBeCanceled);
    }

    /// <summary>Without a caller's token, bodies still get a cancelable token (FailFast must be able to cancel it).</summary>
    [Theory]
    [MemberData(nameof(Everything))]
    public async Task Call_NoCallerToken_BodiesGetOneCancelableToken(Api api, SourceKind kind)
    {
        var tracker = new Tracker();
        var call = FanOutCall.Start(api, new ProbeSource(kind, 50), tracker.YieldOnceAsync);

        await call.Completion.Within();
        var token = Assert.Single(tracker.Tokens.Distinct());
        Assert.True(token.CanBeCanceled);
        Assert.False(token.IsCancellationRequested);
    }

    /// <summary>Cancellation_CorrectTokenPassedToAsyncEnumerator: the async enumerator gets the bodies' token (the run's).</summary>
    [Theory]
    [MemberData(nameof(Apis))]
    public async Task Call_AsyncSource_EnumeratorGetsTheBodiesToken(Api api)
    {
        using var cts = new CancellationTokenSource();
        var source = new ProbeSource(SourceKind.Async, 20);
        var tracker = new Tracker();
        var call = FanOutCall.Start(api, source, (item, ct) =>
        {
            tracker.Enter(item, ct);
            tracker.Exit();
            return new ValueTask<int>(item);
        }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2) }, cts.Token);

        await call.Completion.Within();
        Assert.Equal(Assert.Single(tracker.Tokens.Distinct()), source.EnumeratorToken);
    }

    public static TheoryData<Api> Apis => [.. Matrix.AllApis];

    /// <summary>The caller's cancellation reaches an async source's enumerator through its token.</summary>
    [Theory]
    [MemberData(nameof(Apis))]
    public async Task Call_CanceledWhileAsyncSourceWaits_CancelsEnumeratorToken(Api api)
    {
        using var cts = new CancellationTokenSource();
        var source = new ProbeSource(SourceKind.Async, ProbeSource.Endless);
        var call = FanOutCall.Start(api, source, static (item, _) => new ValueTask<int>(item), new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2) }, cts.Token);

        Assert.True(await Wait.UntilAsync(() => source.Pulled > 5));
        await cts.CancelAsync();
        await call.AssertCanceledAsync(cts.Token);
        Assert.True(source.EnumeratorToken.IsCancellationRequested);
    }
}
