using FanOut.Tests.Infrastructure;

namespace FanOut.Tests.Contract;

/// <summary>The contract for sources read through an enumerator: laziness, its failures, and its disposal.</summary>
public abstract class EnumeratedSourceContractTests : FanOutContractTests
{
    [Fact]
    public async Task FanOut_GetEnumeratorThrows_FaultsWithIt()
    {
        var task = RunAsync(new SourceProbe(10) { ThrowOnGetEnumerator = true }, (i, _) => new(i), FixedLimit(2), default);

        await task.Settled();
        Assert.Equal("GetEnumerator failed", task.Exception!.InnerExceptions[0].Message);
    }

    [Fact]
    public async Task FanOut_MoveNextThrows_FaultsWithItAndDisposesEnumerator()
    {
        var source = new SourceProbe(100) { ThrowOnMoveNextAt = 5 };
        var task = RunAsync(source, (i, _) => new(i), FixedLimit(2, ErrorMode.RunAll), default);

        await task.Settled();
        Assert.True(task.IsFaulted);
        Assert.Contains(task.Exception!.InnerExceptions, e => e.Message == "MoveNext failed");
        Assert.Equal(1, source.Disposed);
    }

    [Fact]
    public async Task FanOut_DisposeThrows_FaultsWithIt()
    {
        var source = new SourceProbe(10) { ThrowOnDispose = true };
        var task = RunAsync(source, (i, _) => new(i), FixedLimit(2), default);

        await task.Settled();
        Assert.Equal("Dispose failed", Assert.Single(task.Exception!.InnerExceptions).Message);
    }

    [Fact]
    public async Task FanOut_BodyFails_EnumeratorDisposedBeforeTaskCompletes()
    {
        var source = new SourceProbe(100);
        var task = RunAsync(source, (i, _) => i == 7 ? throw new InvalidOperationException() : new ValueTask<int>(i), FixedLimit(2), default);

        await task.Settled();
        Assert.True(task.IsFaulted);
        Assert.Equal(1, source.Disposed);
    }

    [Fact]
    public async Task FanOut_EndlessSource_PullsOnlyABoundedLookAheadBeyondInFlight()
    {
        const int limit = 4;
        var source = new SourceProbe(0) { Endless = true };
        var probe = new ConcurrencyProbe();
        using var cts = new CancellationTokenSource();
        var task = RunAsync(source, async (i, ct) =>
        {
            probe.Enter();
            await Task.Delay(Timeout.Infinite, ct);
            return i;
        }, FixedLimit(limit), cts.Token);

        await Wait.UntilAsync(() => probe.Current == limit, "the limit is in flight");
        await Task.Delay(50); // time enough to over-pull, if the source were pulled eagerly
        var pulled = source.Pulled;
        await cts.CancelAsync();
        await task.Settled();

        Assert.InRange(pulled, limit, limit + 1);
        Assert.True(task.IsCanceled);
        Assert.Equal(1, source.Disposed);
    }
}
