using FanOut.Conformance.Tests.Infrastructure;

namespace FanOut.Conformance.Tests;

/// <summary>
/// Parallel.ForEachAsync's Exception_FromGetEnumerator_*, Exception_NullFromGetEnumerator_*, Exception_FromMoveNext_*,
/// Exception_FromDispose_* and Exception_FromDisposeAndCancellationCallback_*: what the source throws faults the call (it is
/// never thrown to the caller), alone, and the enumerator is disposed before the call completes. For a stream, the
/// enumeration throws it (FanOutOutcomes too: "The enumeration throws only what the source threw").
/// </summary>
public sealed class SourceExceptionTests
{
    public static TheoryData<Api, SourceKind> Enumerated => Matrix.Enumerated;

    public static TheoryData<Api> Apis => [.. Matrix.AllApis];

    public static TheoryData<Api, SourceKind, Ending> EnumeratedByEnding
    {
        get
        {
            var data = new TheoryData<Api, SourceKind, Ending>();
            foreach (var api in Matrix.AllApis)
            {
                foreach (var kind in Matrix.EnumeratedSources)
                {
                    foreach (var ending in Enum.GetValues<Ending>())
                    {
                        data.Add(api, kind, ending);
                    }
                }
            }

            return data;
        }
    }

    /// <summary>How a run ends.</summary>
    public enum Ending
    {
        Success,
        BodyFailure,
        Cancellation,
        SourceFailure,
    }

    [Theory]
    [MemberData(nameof(Enumerated))]
    public async Task Call_GetEnumeratorThrows_FailsWithItAloneAndRunsNoBody(Api api, SourceKind kind)
    {
        var source = new ProbeSource(kind, 5) { GetEnumeratorThrows = new FormatException("GetEnumerator") };
        var ran = 0;
        var call = FanOutCall.Start(api, source, (item, _) =>
        {
            Interlocked.Increment(ref ran);
            return new ValueTask<int>(item);
        }); // never throws here: the failure belongs to the task

        var exceptions = await call.AssertFaultedAsync();
        Assert.Same(source.GetEnumeratorThrows, Assert.Single(exceptions));
        Assert.Equal(0, ran);
    }

    [Theory]
    [MemberData(nameof(Enumerated))]
    public async Task Call_GetEnumeratorReturnsNull_FailsWithInvalidOperationException(Api api, SourceKind kind)
    {
        var source = new ProbeSource(kind, 5) { GetEnumeratorReturnsNull = true };
        var call = FanOutCall.Start(api, source, static (item, _) => new ValueTask<int>(item));

        var exceptions = await call.AssertFaultedAsync();
        Assert.IsType<InvalidOperationException>(Assert.Single(exceptions));
    }

    [Theory]
    [MemberData(nameof(Enumerated))]
    public async Task Call_MoveNextThrows_FailsWithItAloneAfterDisposingEnumerator(Api api, SourceKind kind)
    {
        var source = new ProbeSource(kind, 10) { MoveNextThrows = new FormatException("MoveNext"), FailAt = 4 };
        var call = FanOutCall.Start(api, source, static (item, _) => new ValueTask<int>(item), new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2) });

        var exceptions = await call.AssertFaultedAsync();
        Assert.Same(source.MoveNextThrows, Assert.Single(exceptions));
        Assert.Equal(1, source.Disposed);
    }

    [Theory]
    [MemberData(nameof(Enumerated))]
    public async Task Call_CurrentThrows_FailsWithItAloneAfterDisposingEnumerator(Api api, SourceKind kind)
    {
        var source = new ProbeSource(kind, 10) { CurrentThrows = new FormatException("Current"), FailAt = 4 };
        var call = FanOutCall.Start(api, source, static (item, _) => new ValueTask<int>(item), new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2) });

        var exceptions = await call.AssertFaultedAsync();
        Assert.Same(source.CurrentThrows, Assert.Single(exceptions));
        Assert.Equal(1, source.Disposed);
    }

    /// <summary>Exception_FromDispose: every item ran, then Dispose threw: the call fails with it (a stream after yielding every result).</summary>
    [Theory]
    [MemberData(nameof(Enumerated))]
    public async Task Call_DisposeThrows_FailsWithItAfterEveryItemRan(Api api, SourceKind kind)
    {
        var source = new ProbeSource(kind, 6) { DisposeThrows = new FormatException("Dispose") };
        var ran = 0;
        var call = FanOutCall.Start(api, source, (item, _) =>
        {
            Interlocked.Increment(ref ran);
            return new ValueTask<int>(item);
        });

        var exceptions = await call.AssertFaultedAsync();
        Assert.Same(source.DisposeThrows, Assert.Single(exceptions));
        Assert.Equal(6, ran);
        if (call.IsStream)
        {
            Assert.Equal(6, call.Results.Count);
        }
    }

    /// <summary>Exception_FromDisposeAndCancellationCallback_Async: a callback on the enumerator's token that throws is not lost either.</summary>
    [Theory]
    [MemberData(nameof(TaskApis))]
    public async Task Call_DisposeThrowsAndEnumeratorTokenCallbackThrows_FailsWithBoth(Api api)
    {
        var source = new ProbeSource(SourceKind.Async, 3)
        {
            DisposeThrows = new DivideByZeroException("DisposeAsync"),
            OnEnumeratorTokenCanceled = static () => throw new InvalidTimeZoneException("callback"),
        };
        var call = FanOutCall.Start(api, source, static (item, _) => new ValueTask<int>(item));

        var exceptions = await call.AssertFaultedAsync();
        Assert.Contains(exceptions, static e => e is DivideByZeroException);
        Assert.Contains(exceptions, static e => e is InvalidTimeZoneException);
    }

    public static TheoryData<Api> TaskApis => [.. Matrix.TaskApis];

    /// <summary>A read-only list whose indexer throws for one item: the call fails with that exception.</summary>
    [Theory]
    [MemberData(nameof(Apis))]
    public async Task Call_ListIndexerThrows_FailsWithIt(Api api)
    {
        var source = new ProbeSource(SourceKind.ReadOnlyList, 10) { CurrentThrows = new FormatException("indexer"), FailAt = 4 };
        var call = FanOutCall.Start(api, source, static (item, _) => new ValueTask<int>(item), new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2) });

        var exceptions = await call.AssertFaultedAsync();
        Assert.Same(source.CurrentThrows, Assert.Single(exceptions));
    }

    /// <summary>A read-only list whose Count throws: the call's task fails with it; the call itself does not throw.</summary>
    [Theory]
    [MemberData(nameof(Apis))]
    public async Task Call_ListCountThrows_FailsTaskNotCaller(Api api)
    {
        var source = new ProbeSource(SourceKind.ReadOnlyList, 10) { CountThrows = new FormatException("Count") };
        var ran = 0;
        var call = FanOutCall.Start(api, source, (item, _) =>
        {
            Interlocked.Increment(ref ran);
            return new ValueTask<int>(item);
        });

        var exceptions = await call.AssertFaultedAsync();
        Assert.Same(source.CountThrows, Assert.Single(exceptions));
        Assert.Equal(0, ran);
    }

    /// <summary>However the run ends, the enumerator is disposed exactly once, and before the call completes.</summary>
    [Theory]
    [MemberData(nameof(EnumeratedByEnding))]
    public async Task Call_AnyEnding_DisposesEnumeratorOnceBeforeCompletion(Api api, SourceKind kind, Ending ending)
    {
        using var cts = new CancellationTokenSource();
        var source = ending switch
        {
            Ending.SourceFailure => new ProbeSource(kind, ProbeSource.Endless) { MoveNextThrows = new FormatException("MoveNext"), FailAt = 20 },
            Ending.Success => new ProbeSource(kind, 50),
            _ => new ProbeSource(kind, ProbeSource.Endless),
        };
        var tracker = new Tracker();
        var call = FanOutCall.Start(api, source, async (item, ct) =>
        {
            tracker.Enter(item, ct);
            try
            {
                await Task.Yield();
                if (ending == Ending.BodyFailure && item == 10)
                {
                    throw new FormatException("body");
                }

                if (ending == Ending.Cancellation && item == 10)
                {
                    await cts.CancelAsync();
                }

                return item;
            }
            finally
            {
                tracker.Exit();
            }
        }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(3) }, cts.Token);

        var disposedAtCompletion = call.Completion.ContinueWith(
            _ => (source.Disposed, tracker.Active), CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);

        if (ending == Ending.BodyFailure && api == Api.Outcomes)
        {
            // FanOutOutcomes takes the failure as an outcome and goes on with an endless source: end it by cancelling.
            await tracker.WhenStarted(30).Within();
            await cts.CancelAsync();
        }

        await call.SettleAsync();
        var (disposed, active) = await disposedAtCompletion.Within();
        Assert.Equal(1, disposed);
        Assert.Equal(0, active);
        Assert.Equal(1, source.EnumeratorsCreated);
        await Wait.QuietPeriod();
        Assert.Equal(1, source.Disposed);
    }

    /// <summary>
    /// RunAll: the source fails after some items were taken; the items taken still ran, and the call fails with a
    /// FanOutException that keeps the body failures and carries the source's exception, so neither hides the other.
    /// </summary>
    [Theory]
    [MemberData(nameof(TaskCallsOverEnumerated))]
    public async Task Call_RunAllBodyAndSourceFail_FanOutExceptionCarriesBoth(Api api, SourceKind kind)
    {
        var source = new ProbeSource(kind, 20) { MoveNextThrows = new InvalidDataException("MoveNext"), FailAt = 10 };
        var ran = new System.Collections.Concurrent.ConcurrentBag<int>();
        var call = FanOutCall.Start(api, source, (item, _) =>
        {
            ran.Add(item);
            return item == 3 ? throw new FormatException("item 3") : new ValueTask<int>(item);
        }, new FanOutOptions { Errors = ErrorMode.RunAll, Limit = ConcurrencyLimit.Fixed(2) });

        var exceptions = await call.AssertFaultedAsync();
        Assert.Equal(Enumerable.Range(0, 10), ran.Order());
        var e = Assert.IsAssignableFrom<FanOutException>(exceptions[0]);
        Assert.Equal(3, Assert.Single(e.Failures).Index);
        Assert.Same(source.MoveNextThrows, Assert.Single(e.SourceExceptions));
        Assert.Equal(1, source.Disposed);
    }

    public static TheoryData<Api, SourceKind> TaskCallsOverEnumerated => Matrix.Cross(Matrix.TaskApis, Matrix.EnumeratedSources);
}
