using System.Runtime.CompilerServices;

using FanOut.Conformance.Tests.Infrastructure;

namespace FanOut.Conformance.Tests;

/// <summary>How a failing body fails.</summary>
public enum ThrowStyle
{
    /// <summary>The delegate throws before it returns a ValueTask.</summary>
    Synchronously,

    /// <summary>The delegate returns an already-faulted ValueTask.</summary>
    FaultedValueTask,

    /// <summary>The body's ValueTask faults later, on another thread (Dataflow's <c>Task.Run(thrower)</c>).</summary>
    Asynchronously,
}

/// <summary>
/// Parallel.ForEachAsync's Exception_FromLoopBody_*, Exception_ImplicitlyCancelsOtherWorkers_* and
/// Exception_LockWaitAsyncCancellationDoesntPropagate; Dataflow's TestFaulting and TestExceptions. In FailFast (the default)
/// the first failure stops new items, cancels the bodies' token, waits for the items in flight and faults the call with
/// every exception that occurred. FanOut adds <see cref="ErrorMode.RunAll"/> and FanOutOutcomes, whose promises are
/// expressed here too.
/// </summary>
public sealed class BodyExceptionTests
{
    public static TheoryData<Api, SourceKind> Failing => Matrix.Failing;

    public static TheoryData<Api, SourceKind> TaskCalls => Matrix.TaskCalls;

    public static TheoryData<Api, SourceKind> StreamsThatFail => Matrix.Cross([Api.Stream, Api.OrderedStream], Matrix.AllSources);

    public static TheoryData<Api, SourceKind, ThrowStyle> FailingByStyle
    {
        get
        {
            var data = new TheoryData<Api, SourceKind, ThrowStyle>();
            foreach (var (api, kind) in Matrix.FailingApis.SelectMany(a => Matrix.AllSources.Select(k => (a, k))))
            {
                foreach (var style in Enum.GetValues<ThrowStyle>())
                {
                    data.Add(api, kind, style);
                }
            }

            return data;
        }
    }

    public static TheoryData<Api, SourceKind, ThrowStyle> TaskCallsByStyle
    {
        get
        {
            var data = new TheoryData<Api, SourceKind, ThrowStyle>();
            foreach (var (api, kind) in Matrix.TaskApis.SelectMany(a => Matrix.AllSources.Select(k => (a, k))))
            {
                data.Add(api, kind, ThrowStyle.Synchronously);
                data.Add(api, kind, ThrowStyle.Asynchronously);
            }

            return data;
        }
    }

    public static TheoryData<SourceKind, bool> SourcesByOrder
    {
        get
        {
            var data = new TheoryData<SourceKind, bool>();
            foreach (var kind in Matrix.AllSources)
            {
                data.Add(kind, false);
                data.Add(kind, true);
            }

            return data;
        }
    }

    /// <summary>Dataflow's TestFaulting / TestExceptions: whichever way the body fails, the call fails with that exception.</summary>
    [Theory]
    [MemberData(nameof(FailingByStyle))]
    public async Task Call_EveryBodyThrows_FailsWithThatException(Api api, SourceKind kind, ThrowStyle style)
    {
        var call = FanOutCall.Start(api, new ProbeSource(kind, 8), (item, _) => Fail(style, new InvalidOperationException($"item {item}")));

        var exceptions = await call.AssertFaultedAsync();
        Assert.NotEmpty(exceptions);
        Assert.All(exceptions, static e => Assert.IsType<InvalidOperationException>(e));
    }

    /// <summary>Exception_FromLoopBody: two bodies that are both running when they throw are both reported.</summary>
    [Theory]
    [MemberData(nameof(TaskCallsByStyle))]
    public async Task Call_TwoRunningBodiesThrow_FaultsWithBothExceptions(Api api, SourceKind kind, ThrowStyle style)
    {
        using var bothStarted = new CountdownEvent(2);
        var call = FanOutCall.Start(api, new ProbeSource(kind, 2), (item, _) =>
        {
            if (style == ThrowStyle.Synchronously)
            {
                // Block the thread, as the original's Barrier does: a body that throws synchronously.
                bothStarted.Signal();
                bothStarted.Wait(Wait.Timeout);
                throw Distinct(item);
            }

            return ThrowWhenBothStartedAsync(item);
        }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2) });

        var exceptions = await call.AssertFaultedAsync();
        Assert.Equal(2, exceptions.Count);
        Assert.Contains(exceptions, static e => e is FormatException);
        Assert.Contains(exceptions, static e => e is InvalidTimeZoneException);

        async ValueTask<int> ThrowWhenBothStartedAsync(int item)
        {
            bothStarted.Signal();
            await Task.Run(() => bothStarted.Wait(Wait.Timeout));
            throw Distinct(item);
        }
    }

    /// <summary>A FailFast stream throws one of the failures (the first), after the items in flight finished.</summary>
    [Theory]
    [MemberData(nameof(StreamsThatFail))]
    public async Task Stream_TwoRunningBodiesThrow_ThrowsOneOfThemAfterBothFinished(Api api, SourceKind kind)
    {
        var remaining = 2;
        var bothStarted = Wait.Gate();
        var finished = 0;
        var call = FanOutCall.Start(api, new ProbeSource(kind, 2), async (item, _) =>
        {
            if (Interlocked.Decrement(ref remaining) == 0)
            {
                bothStarted.TrySetResult();
            }

            await bothStarted.Task.WaitAsync(Wait.Timeout);
            if (item == 1)
            {
                await Task.Delay(20); // finishes second: the stream must still wait for it
            }

            Interlocked.Increment(ref finished);
            throw Distinct(item);
        }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2) });

        var exceptions = await call.AssertFaultedAsync();
        var e = Assert.Single(exceptions);
        Assert.True(e is FormatException or InvalidTimeZoneException, $"unexpected {e}");
        Assert.Equal(2, Volatile.Read(ref finished));
    }

    /// <summary>
    /// Exception_ImplicitlyCancelsOtherWorkers: item 0 fails while item 1 runs; item 1's token is canceled, no other item
    /// starts, and the failure surfaces.
    /// </summary>
    [Theory]
    [MemberData(nameof(Failing))]
    public async Task Call_BodyThrows_CancelsRunningBodiesAndStartsNoMoreItems(Api api, SourceKind kind)
    {
        var tracker = new Tracker();
        var secondStarted = tracker.WhenStarted(2);
        var secondSawCancellation = false;
        var call = FanOutCall.Start(api, ProbeSource.Long(kind), async (item, ct) =>
        {
            tracker.Enter(item, ct);
            try
            {
                if (item == 0)
                {
                    await secondStarted.WaitAsync(Wait.Timeout, CancellationToken.None);
                    throw new FormatException("item 0");
                }

                var canceled = Wait.Gate();
                await using (ct.Register(() => canceled.TrySetResult()))
                {
                    await canceled.Task.WaitAsync(Wait.Timeout, CancellationToken.None);
                }

                secondSawCancellation = ct.IsCancellationRequested;
                return item;
            }
            finally
            {
                tracker.Exit();
            }
        }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2) });

        var exceptions = await call.AssertFaultedAsync();
        Assert.IsType<FormatException>(Assert.Single(exceptions));
        Assert.True(secondSawCancellation);
        Assert.Equal(2, tracker.Started);
        Assert.Equal([0, 1], tracker.StartOrder.Order());
    }

    /// <summary>Exception_ImplicitlyCancelsOtherWorkers, first half: with the default limit, a failure deep into an endless source ends the call.</summary>
    [Theory]
    [MemberData(nameof(Failing))]
    public async Task Call_DefaultOptionsBodyThrowsLate_FailsWithIt(Api api, SourceKind kind)
    {
        var call = FanOutCall.Start(api, ProbeSource.Long(kind), async (item, _) =>
        {
            await Task.Yield();
            return item == 1_000 ? throw new FormatException("item 1000") : item;
        });

        var exceptions = await call.AssertFaultedAsync();
        Assert.Contains(exceptions, static e => e is FormatException);
        Assert.All(exceptions, static e => Assert.IsType<FormatException>(e));
    }

    /// <summary>
    /// Exception_LockWaitAsyncCancellationDoesntPropagate: workers waiting for their turn at the async enumerator when the
    /// failure cancels the run add no OperationCanceledException of their own.
    /// </summary>
    [Theory]
    [MemberData(nameof(TaskCallsAsyncOnly))]
    public async Task Call_FailureWhileOthersWaitForAsyncSource_ReportsOnlyTheFailure(Api api)
    {
        var signal = Wait.Gate();
        var call = FanOutCall.Start(api, GatedSource(signal.Task), (item, _) =>
        {
            if (item == 0)
            {
                signal.TrySetResult();
                throw new FormatException("item 0");
            }

            return new ValueTask<int>(item);
        }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(3) });

        var exceptions = await call.AssertFaultedAsync();
        Assert.IsType<FormatException>(Assert.Single(exceptions));
    }

    public static TheoryData<Api> TaskCallsAsyncOnly => [.. Matrix.TaskApis];

    /// <summary>FanOut's RunAll: every item runs, and the call fails with a FanOutException that ties each failure to its index.</summary>
    [Theory]
    [MemberData(nameof(TaskCalls))]
    public async Task Call_RunAllWithFailures_RunsEveryItemAndReportsFailuresByIndex(Api api, SourceKind kind)
    {
        const int Count = 30;
        int[] failing = [3, 11, 29];
        var runs = new int[Count];
        var call = FanOutCall.Start(api, new ProbeSource(kind, Count), async (item, _) =>
        {
            Interlocked.Increment(ref runs[item]);
            await Task.Yield();
            return failing.Contains(item) ? throw new FormatException($"item {item}") : item * 2;
        }, new FanOutOptions { Errors = ErrorMode.RunAll, Limit = ConcurrencyLimit.Fixed(4) });

        var exceptions = await call.AssertFaultedAsync();
        Assert.All(runs, static r => Assert.Equal(1, r));
        var e = Assert.IsAssignableFrom<FanOutException>(Assert.Single(exceptions));
        Assert.Equal(failing.Select(static i => (long)i), e.Failures.Select(static f => f.Index));
        Assert.All(e.Failures, f => Assert.Equal($"item {f.Index}", f.Exception.Message));
        Assert.Equal(Count, e.ItemCount);
        Assert.Equal(failing.Length, e.FailureCount);
        if (api == Api.Results)
        {
            var results = Assert.IsType<FanOutException<int>>(e);
            for (var i = 0; i < Count; i++)
            {
                Assert.Equal(!failing.Contains(i), results.Succeeded(i));
                Assert.Equal(failing.Contains(i) ? 0 : i * 2, results.Results[i]);
            }
        }
    }

    /// <summary>A RunAll stream yields every success, then throws the FanOutException.</summary>
    [Theory]
    [MemberData(nameof(StreamsThatFail))]
    public async Task Stream_RunAllWithFailures_YieldsEverySuccessThenThrows(Api api, SourceKind kind)
    {
        const int Count = 30;
        int[] failing = [0, 14, 29];
        var call = FanOutCall.Start(api, new ProbeSource(kind, Count), async (item, _) =>
        {
            await Task.Yield();
            return failing.Contains(item) ? throw new FormatException($"item {item}") : item;
        }, new FanOutOptions { Errors = ErrorMode.RunAll, Limit = ConcurrencyLimit.Fixed(4) });

        var exceptions = await call.AssertFaultedAsync();
        var e = Assert.IsType<FanOutException>(Assert.Single(exceptions));
        Assert.Equal(failing.Select(static i => (long)i), e.Failures.Select(static f => f.Index));
        var successes = Enumerable.Range(0, Count).Except(failing);
        Assert.Equal(successes, api == Api.OrderedStream ? call.Results : call.Results.Order());
    }

    /// <summary>FanOutOutcomes: a failure is an outcome (whatever Errors says): every item yields exactly one, and the enumeration ends normally.</summary>
    [Theory]
    [MemberData(nameof(SourcesByOrder))]
    public async Task Outcomes_BodiesThrow_EveryItemYieldsOneOutcome(SourceKind kind, bool ordered)
    {
        const int Count = 40;
        var source = new ProbeSource(kind, Count);
        var options = new FanOutOptions { Errors = ErrorMode.FailFast, Limit = ConcurrencyLimit.Fixed(3), Ordered = ordered };
        var outcomes = new List<FanOutOutcome<int>>();
        var enumerable = source.AsyncEnumerable is { } a
            ? a.FanOutOutcomes<int, int>(Body, options)
            : source.Enumerable!.FanOutOutcomes<int, int>(Body, options);
        await foreach (var outcome in enumerable.WithCancellation(new CancellationTokenSource(Wait.Timeout).Token))
        {
            outcomes.Add(outcome);
        }

        Assert.Equal(Enumerable.Range(0, Count).Select(static i => (long)i), ordered ? outcomes.Select(static o => o.Index) : outcomes.Select(static o => o.Index).Order());
        foreach (var o in outcomes)
        {
            if (o.Index % 3 == 0)
            {
                Assert.False(o.Succeeded);
                Assert.Equal($"item {o.Index}", Assert.IsType<FormatException>(o.Exception).Message);
            }
            else
            {
                Assert.True(o.Succeeded);
                Assert.Equal(o.Index * 10, o.Result);
            }
        }

        static async ValueTask<int> Body(int item, CancellationToken ct)
        {
            await Task.Yield();
            return item % 3 == 0 ? throw new FormatException($"item {item}") : item * 10;
        }
    }

    private static ValueTask<int> Fail(ThrowStyle style, Exception e) => style switch
    {
        ThrowStyle.Synchronously => throw e,
        ThrowStyle.FaultedValueTask => ValueTask.FromException<int>(e),
        _ => new ValueTask<int>(Task.Run(new Func<int>(() => throw e))),
    };

    private static Exception Distinct(int item) => item switch
    {
        0 => new FormatException("item 0"),
        1 => new InvalidTimeZoneException("item 1"),
        _ => new InvalidOperationException($"item {item}"),
    };

    /// <summary>Item 0 at once; every later item only once <paramref name="signal"/> completed (the original's iterator).</summary>
    private static IAsyncEnumerable<int> GatedSource(Task signal) => Iterate(signal);

    private static async IAsyncEnumerable<int> Iterate(Task signal, [EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        for (var i = 0; ; i++)
        {
            if (i != 0)
            {
                await signal;
            }

            yield return i;
        }
    }
}
