// Issue 17, item 13: the natural first attempt compiles and does what it reads as.
using System.Net;

using FanOut.Conformance.Tests.Infrastructure;

namespace FanOut.Conformance.Tests;

public sealed class NaturalFormsTests
{
    /// <summary>A lambda returning <c>Task&lt;string&gt;</c> (HttpClient's own shape) binds to a results overload and gives <c>string[]</c>.</summary>
    [Fact]
    public async Task FanOutAsync_TaskReturningLambda_ReturnsResultsArray()
    {
        using var http = new HttpClient(new EchoHandler());
        string[] urls = ["http://example.test/a", "http://example.test/b", "http://example.test/c"];

        string[] r = await urls.FanOutAsync((u, ct) => http.GetStringAsync(u, ct));

        Assert.Equal(urls.Select(static u => "body of " + u), r);
    }

    /// <summary>A lambda returning a plain <c>Task</c> binds to the overload without results.</summary>
    [Fact]
    public async Task FanOutAsync_TaskReturningLambdaWithoutResult_RunsEveryItem()
    {
        var ran = 0;
        int[] items = [1, 2, 3, 4];

        await items.FanOutAsync((x, ct) => Task.Run(() => { Interlocked.Add(ref ran, x); }, ct));

        Assert.Equal(10, ran);
    }

    /// <summary>A bounded call needs no options object: <c>FanOutAsync(8, body)</c> runs exactly 8 bodies at once.</summary>
    [Fact]
    public async Task FanOutAsync_IntLimitShortcut_RunsExactlyThatManyAtOnce()
    {
        var items = Enumerable.Range(0, 40).ToArray();
        var tracker = new Tracker();
        var eight = tracker.WhenStarted(8);

        await items.FanOutAsync(8, async (x, ct) =>
        {
            tracker.Enter(x, ct);
            try
            {
                await eight.WaitAsync(Wait.Timeout, ct);
            }
            finally
            {
                tracker.Exit();
            }
        }).Within();

        Assert.Equal(40, tracker.Finished);
        Assert.Equal(8, tracker.MaxActive);
    }

    /// <summary>The int shortcut with results.</summary>
    [Fact]
    public async Task FanOutAsync_IntLimitShortcutWithResults_ReturnsResultsInSourceOrder()
    {
        var items = Enumerable.Range(0, 100).ToList();

        int[] r = await items.FanOutAsync(8, async (x, ct) =>
        {
            await Task.Yield();
            return x * 2;
        });

        Assert.Equal(items.Select(static x => x * 2), r);
    }

    /// <summary><c>FanOutException&lt;T&gt;.Succeeded</c>/<c>TryGetResult</c> take the <c>long</c> index that <c>FanOutFailure.Index</c> carries.</summary>
    [Fact]
    public async Task FanOutException_SucceededAndTryGetResult_TakeFailureIndex()
    {
        int[] items = [0, 1, 2, 3];
        var e = await Assert.ThrowsAsync<FanOutException<int>>(() => items.FanOutAsync(
            (x, ct) => x == 2 ? throw new FormatException() : new ValueTask<int>(x),
            new FanOutOptions { Errors = ErrorMode.RunAll }));

        var failure = Assert.Single(e.Failures);
        Assert.False(e.Succeeded(failure.Index));
        Assert.False(e.TryGetResult(failure.Index, out _));
        Assert.True(e.TryGetResult(3L, out var three));
        Assert.Equal(3, three);
    }

    private sealed class EchoHandler : HttpMessageHandler
    {
        protected override Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken) =>
            Task.FromResult(new HttpResponseMessage(HttpStatusCode.OK) { Content = new StringContent("body of " + request.RequestUri) });
    }
}
