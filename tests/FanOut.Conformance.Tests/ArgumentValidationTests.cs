using FanOut.Conformance.Tests.Infrastructure;

namespace FanOut.Conformance.Tests;

/// <summary>Every public overload, so that a missing argument check in one of them shows.</summary>
public enum Overload
{
    ActionsOfEnumerable,
    ActionsOfAsyncEnumerable,
    ResultsOfEnumerable,
    ResultsOfAsyncEnumerable,
    StreamOfEnumerable,
    StreamOfAsyncEnumerable,
    OutcomesOfEnumerable,
    OutcomesOfAsyncEnumerable,
}

/// <summary>
/// Parallel.ForEachAsync's InvalidArguments_ThrowsException, re-expressed: bad arguments throw to the caller, synchronously,
/// naming the parameter, before the source is touched or a body runs, and before a canceled token is looked at.
/// </summary>
public sealed class ArgumentValidationTests
{
    public static TheoryData<Overload> Overloads => [.. Enum.GetValues<Overload>()];

    [Theory]
    [MemberData(nameof(Overloads))]
    public void Call_NullSource_ThrowsArgumentNullExceptionNamingSource(Overload overload)
    {
        var ran = 0;
        var e = Assert.Throws<ArgumentNullException>(() => Invoke(overload, probe: null, Counting(() => ran++), options: null, default));
        Assert.Equal("source", e.ParamName);
        Assert.Equal(0, ran);
    }

    [Theory]
    [MemberData(nameof(Overloads))]
    public void Call_NullBody_ThrowsArgumentNullExceptionNamingBodyWithoutTouchingSource(Overload overload)
    {
        var probe = ProbeFor(overload);
        var e = Assert.Throws<ArgumentNullException>(() => Invoke(overload, probe, body: null, options: null, default));
        Assert.Equal("body", e.ParamName);
        Assert.Equal(0, probe.EnumeratorsCreated);
    }

    [Theory]
    [MemberData(nameof(Overloads))]
    public void Call_NullBodyAndCanceledToken_ThrowsArgumentNullExceptionNotCanceled(Overload overload)
    {
        var e = Assert.Throws<ArgumentNullException>(() => Invoke(overload, ProbeFor(overload), body: null, options: null, new CancellationToken(canceled: true)));
        Assert.Equal("body", e.ParamName);
    }

    [Theory]
    [MemberData(nameof(Overloads))]
    public void Call_ErrorModeOutOfRange_ThrowsArgumentOutOfRangeExceptionBeforeAnythingRuns(Overload overload)
    {
        var probe = ProbeFor(overload);
        var ran = 0;
        var e = Assert.Throws<ArgumentOutOfRangeException>(
            () => Invoke(overload, probe, Counting(() => ran++), new FanOutOptions { Errors = (ErrorMode)42 }, default));
        Assert.Equal(nameof(FanOutOptions.Errors), e.ParamName);
        Assert.Equal(0, probe.EnumeratorsCreated);
        Assert.Equal(0, ran);
    }

    [Theory]
    [MemberData(nameof(Overloads))]
    public void Call_OverloadRetriesOutOfRange_ThrowsArgumentOutOfRangeExceptionBeforeAnythingRuns(Overload overload)
    {
        foreach (var retries in new[] { -1, 101, int.MinValue, int.MaxValue })
        {
            var probe = ProbeFor(overload);
            var e = Assert.Throws<ArgumentOutOfRangeException>(
                () => Invoke(overload, probe, Counting(static () => { }), new FanOutOptions { OverloadRetries = retries }, default));
            Assert.Equal(nameof(FanOutOptions.OverloadRetries), e.ParamName);
            Assert.Equal(0, probe.EnumeratorsCreated);
        }
    }

    [Theory]
    [MemberData(nameof(Overloads))]
    public void Call_BadOptionsAndCanceledToken_ThrowsArgumentOutOfRangeExceptionNotCanceled(Overload overload)
    {
        Assert.Throws<ArgumentOutOfRangeException>(
            () => Invoke(overload, ProbeFor(overload), Counting(static () => { }), new FanOutOptions { Errors = (ErrorMode)(-1) }, new CancellationToken(canceled: true)));
    }

    [Theory]
    [InlineData(0)]
    [InlineData(-1)]
    [InlineData(int.MinValue)]
    public void Fixed_LimitBelowOne_ThrowsArgumentOutOfRangeExceptionNamingLimit(int limit)
    {
        var e = Assert.Throws<ArgumentOutOfRangeException>(() => ConcurrencyLimit.Fixed(limit));
        Assert.Equal("limit", e.ParamName);
    }

    [Theory]
    [MemberData(nameof(Overloads))]
    public void Call_ValidArguments_ReturnsWithoutThrowing(Overload overload)
    {
        // The counterpart of the checks above: valid arguments never throw to the caller, whatever the source does later.
        var probe = ProbeFor(overload) is { } p ? new ProbeSource(p.Kind, 0) { GetEnumeratorThrows = new FormatException() } : null;
        var result = Invoke(overload, probe, Counting(static () => { }), options: null, default);
        Assert.NotNull(result);
    }

    private static ProbeSource ProbeFor(Overload overload) =>
        new(overload.ToString().EndsWith("AsyncEnumerable", StringComparison.Ordinal) ? SourceKind.Async : SourceKind.Lazy, 3);

    private static Body Counting(Action onRun) => (item, _) =>
    {
        onRun();
        return new ValueTask<int>(item);
    };

    /// <summary>Calls one overload with typed nulls where asked, and returns what it returned (a task or a stream, not enumerated).</summary>
    private static object Invoke(Overload overload, ProbeSource? probe, Body? body, FanOutOptions? options, CancellationToken token)
    {
        var sync = probe?.Enumerable;
        var async = probe?.AsyncEnumerable;
        Func<int, CancellationToken, ValueTask>? action = body is null ? null : (item, ct) => new ValueTask(body(item, ct).AsTask());
        Func<int, CancellationToken, ValueTask<int>>? func = body is null ? null : body.Invoke;
        return overload switch
        {
            Overload.ActionsOfEnumerable => sync!.FanOutAsync(action!, options, token),
            Overload.ActionsOfAsyncEnumerable => async!.FanOutAsync(action!, options, token),
            Overload.ResultsOfEnumerable => sync!.FanOutAsync(func!, options, token),
            Overload.ResultsOfAsyncEnumerable => async!.FanOutAsync(func!, options, token),
            Overload.StreamOfEnumerable => sync!.FanOutStream(func!, options, token),
            Overload.StreamOfAsyncEnumerable => async!.FanOutStream(func!, options, token),
            Overload.OutcomesOfEnumerable => sync!.FanOutOutcomes(func!, options, token),
            Overload.OutcomesOfAsyncEnumerable => async!.FanOutOutcomes(func!, options, token),
            _ => throw new ArgumentOutOfRangeException(nameof(overload)),
        };
    }
}
