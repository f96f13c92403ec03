using FanOut.Tests.Infrastructure;

namespace FanOut.Tests.Contract;

public sealed class ArrayFanOutAsyncTests : FanOutContractTests
{
    protected override Task<int[]> RunAsync(SourceProbe source, Func<int, CancellationToken, ValueTask<int>> body, FanOutOptions? options, CancellationToken cancellationToken) =>
        source.ToArray().FanOutAsync(body, options, cancellationToken);

    protected override void CallWithNulls(bool nullSource) =>
        _ = nullSource ? ((int[])null!).FanOutAsync((i, _) => new ValueTask<int>(i)) : new[] { 1 }.FanOutAsync((Func<int, CancellationToken, ValueTask<int>>)null!);

    [Fact]
    public async Task FanOutAsync_RunAllWithFailures_KeepsResultsOfSucceededItems()
    {
        var task = Enumerable.Range(0, 10).ToArray().FanOutAsync(
            (i, _) => i % 4 == 1 ? throw new InvalidOperationException() : new ValueTask<int>(i * 10),
            new FanOutOptions { Limit = ConcurrencyLimit.Fixed(3), Errors = ErrorMode.RunAll });

        var error = await Assert.ThrowsAsync<FanOutException<int>>(() => task.WithTimeout());
        for (var i = 0; i < 10; i++)
        {
            Assert.Equal(i % 4 != 1, error.Succeeded(i));
            Assert.Equal(i % 4 != 1 ? i * 10 : 0, error.Results[i]);
        }
    }
}

public sealed class ArraySharedLimitTests
{
    [Fact]
    public async Task FanOutAsync_SynchronousBodiesSharingOnePermit_EveryReservedItemStillRuns()
    {
        // Synchronous bodies make workers reserve runs of indices; a worker that loses its permit to the other call
        // while holding reserved indices must wait for it rather than retire, or those items would never run.
        var shared = new FanOutOptions { Limit = ConcurrencyLimit.Fixed(1) };
        var runs = new int[2, 5000];
        var calls = Enumerable.Range(0, 2).Select(c => Enumerable.Range(0, 5000).ToArray().FanOutAsync((i, _) =>
        {
            Interlocked.Increment(ref runs[c, i]);
            return new ValueTask<int>(i);
        }, shared)).ToArray();

        var results = await Task.WhenAll(calls).WithTimeout();

        Assert.All(results, r => Assert.Equal(Enumerable.Range(0, 5000), r));
        Assert.All(runs.Cast<int>(), r => Assert.Equal(1, r));
    }
}

public sealed class EnumerableFanOutAsyncTests : EnumeratedSourceContractTests
{
    protected override Task<int[]> RunAsync(SourceProbe source, Func<int, CancellationToken, ValueTask<int>> body, FanOutOptions? options, CancellationToken cancellationToken) =>
        source.AsEnumerable().FanOutAsync(body, options, cancellationToken);

    protected override void CallWithNulls(bool nullSource) =>
        _ = nullSource ? ((IEnumerable<int>)null!).FanOutAsync((i, _) => new ValueTask<int>(i)) : new SourceProbe(1).AsEnumerable().FanOutAsync((Func<int, CancellationToken, ValueTask<int>>)null!);
}

public sealed class AsyncEnumerableFanOutAsyncTests : EnumeratedSourceContractTests
{
    protected override Task<int[]> RunAsync(SourceProbe source, Func<int, CancellationToken, ValueTask<int>> body, FanOutOptions? options, CancellationToken cancellationToken) =>
        source.AsAsyncEnumerable().FanOutAsync(body, options, cancellationToken);

    protected override void CallWithNulls(bool nullSource) =>
        _ = nullSource ? ((IAsyncEnumerable<int>)null!).FanOutAsync((i, _) => new ValueTask<int>(i)) : new SourceProbe(1).AsAsyncEnumerable().FanOutAsync((Func<int, CancellationToken, ValueTask<int>>)null!);

    [Fact]
    public async Task FanOutAsync_AsyncSource_EnumeratorGetsTheBodiesToken()
    {
        var source = new SourceProbe(5);
        var bodyToken = CancellationToken.None;
        await RunAsync(source, (i, ct) => { bodyToken = ct; return new(i); }, FixedLimit(1), default).WithTimeout();

        Assert.True(source.EnumeratorToken.CanBeCanceled);
        Assert.Equal(bodyToken, source.EnumeratorToken);
    }
}

/// <summary>The overload without results, over a <see cref="List{T}"/> (the IList fast path).</summary>
public sealed class ListActionFanOutAsyncTests : FanOutContractTests
{
    protected override Task<int[]> RunAsync(SourceProbe source, Func<int, CancellationToken, ValueTask<int>> body, FanOutOptions? options, CancellationToken cancellationToken)
    {
        var results = new int[source.Count];
        return source.ToArray().ToList().FanOutAsync(async (i, ct) => results[i] = await body(i, ct), options, cancellationToken).WithResults(results);
    }

    protected override void CallWithNulls(bool nullSource) =>
        _ = nullSource ? ((List<int>)null!).FanOutAsync((_, _) => ValueTask.CompletedTask) : new List<int> { 1 }.FanOutAsync((Func<int, CancellationToken, ValueTask>)null!);
}

/// <summary>The overload without results, over an async source.</summary>
public sealed class AsyncEnumerableActionFanOutAsyncTests : EnumeratedSourceContractTests
{
    protected override Task<int[]> RunAsync(SourceProbe source, Func<int, CancellationToken, ValueTask<int>> body, FanOutOptions? options, CancellationToken cancellationToken)
    {
        var results = new int[Math.Max(source.Count, 1)];
        return source.AsAsyncEnumerable().FanOutAsync(async (i, ct) => results[Math.Min(i, results.Length - 1)] = await body(i, ct), options, cancellationToken).WithResults(results);
    }

    protected override void CallWithNulls(bool nullSource) =>
        _ = nullSource ? ((IAsyncEnumerable<int>)null!).FanOutAsync((_, _) => ValueTask.CompletedTask) : new SourceProbe(1).AsAsyncEnumerable().FanOutAsync((Func<int, CancellationToken, ValueTask>)null!);
}

/// <summary>The stream in completion order, over an enumerable; results are sorted back into item order to compare.</summary>
public sealed class UnorderedStreamTests : EnumeratedSourceContractTests
{
    protected override bool ReportsEveryException => false;

    protected override async Task<int[]> RunAsync(SourceProbe source, Func<int, CancellationToken, ValueTask<int>> body, FanOutOptions? options, CancellationToken cancellationToken)
    {
        var results = new List<int>();
        await foreach (var result in source.AsEnumerable().FanOutStream(body, options, cancellationToken))
        {
            results.Add(result);
        }

        return [.. results.Order()];
    }

    protected override void CallWithNulls(bool nullSource) =>
        _ = nullSource ? ((IEnumerable<int>)null!).FanOutStream((i, _) => new ValueTask<int>(i)) : new SourceProbe(1).AsEnumerable().FanOutStream((Func<int, CancellationToken, ValueTask<int>>)null!);
}

/// <summary>The stream in source order, over an async source; results are compared in the order yielded.</summary>
public sealed class OrderedStreamTests : EnumeratedSourceContractTests
{
    protected override bool ReportsEveryException => false;

    protected override async Task<int[]> RunAsync(SourceProbe source, Func<int, CancellationToken, ValueTask<int>> body, FanOutOptions? options, CancellationToken cancellationToken)
    {
        var results = new List<int>();
        await foreach (var result in source.AsAsyncEnumerable().FanOutStream(body, (options ?? new()) with { Ordered = true }, cancellationToken))
        {
            results.Add(result);
        }

        return [.. results];
    }

    protected override void CallWithNulls(bool nullSource) =>
        _ = nullSource ? ((IAsyncEnumerable<int>)null!).FanOutStream((i, _) => new ValueTask<int>(i)) : new SourceProbe(1).AsAsyncEnumerable().FanOutStream((Func<int, CancellationToken, ValueTask<int>>)null!);
}
