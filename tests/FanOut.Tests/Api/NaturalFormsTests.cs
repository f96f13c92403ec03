using System.Net;

using FanOut.Tests.Infrastructure;

namespace FanOut.Tests.Api;

/// <summary>Issue 17 item 13: the natural first attempt compiles and does what it reads as.</summary>
public sealed class NaturalFormsTests
{
    private static readonly string[] s_urls = ["http://a.test/1", "http://a.test/2", "http://a.test/3"];

    [Fact]
    public async Task FanOutAsync_TaskReturningHttpCall_ReturnsStringArrayInOrder()
    {
        using var http = new HttpClient(new EchoHandler());
        string[] pages = await s_urls.FanOutAsync((u, ct) => http.GetStringAsync(u, ct)).WithTimeout();
        Assert.Equal(s_urls.Select(u => "page " + u), pages);
    }

    [Fact]
    public async Task FanOutAsync_IntShortcut_RunsAtMostThatManyAtOnce()
    {
        var probe = new ConcurrencyProbe();
        int[] doubled = await Enumerable.Range(0, 50).FanOutAsync(3, async (x, ct) =>
        {
            probe.Enter();
            try
            {
                await Task.Delay(2, ct);
                return x * 2;
            }
            finally
            {
                probe.Exit();
            }
        }).WithTimeout();

        Assert.Equal(Enumerable.Range(0, 50).Select(x => x * 2), doubled);
        Assert.InRange(probe.Max, 1, 3);
    }

    [Fact]
    public async Task FanOutStream_IntShortcutWithTaskBody_YieldsEveryResult()
    {
        var seen = new List<int>();
        await foreach (var x in Enumerable.Range(0, 20).FanOutStream(2, (x, _) => Task.FromResult(x + 1)))
        {
            seen.Add(x);
        }

        Assert.Equal(Enumerable.Range(1, 20), seen.Order());
    }

    [Fact]
    public async Task FanOutAsync_TaskBodyWithoutResult_RunsEveryItem()
    {
        var ran = 0;
        await Enumerable.Range(0, 10).FanOutAsync(2, async (_, ct) =>
        {
            await Task.Delay(1, ct);
            Interlocked.Increment(ref ran);
        }).WithTimeout();
        Assert.Equal(10, ran);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(-1)]
    public void FanOutAsync_MaxConcurrencyBelowOne_ThrowsNamingIt(int maxConcurrency)
    {
        var e = Assert.Throws<ArgumentOutOfRangeException>(() => { _ = s_urls.FanOutAsync(maxConcurrency, (u, _) => Task.FromResult(u)); });
        Assert.Equal("maxConcurrency", e.ParamName);
        Assert.Contains("at least 1", e.Message);
    }

    [Fact]
    public void FanOutAsync_NullArgumentsOfTaskOverloads_ThrowNamingThem()
    {
        Assert.Equal("source", Assert.Throws<ArgumentNullException>(() => { _ = ((string[])null!).FanOutAsync((u, _) => Task.FromResult(u)); }).ParamName);
        Assert.Equal("body", Assert.Throws<ArgumentNullException>(() => { _ = s_urls.FanOutAsync((Func<string, CancellationToken, Task<string>>)null!); }).ParamName);
        Assert.Equal("source", Assert.Throws<ArgumentNullException>(() => { _ = ((string[])null!).FanOutAsync(2, (u, _) => Task.FromResult(u)); }).ParamName);
    }

    [Fact]
    public async Task FanOutException_LongIndexFromAFailure_FindsTheResult()
    {
        var e = await Assert.ThrowsAsync<FanOutException<int>>(() => Enumerable.Range(0, 5).FanOutAsync(
            (i, _) => i == 3 ? throw new InvalidOperationException() : Task.FromResult(i * 10),
            new FanOutOptions { Errors = ErrorMode.RunAll }).WithTimeout());

        var failed = e.Failures.Single().Index;
        Assert.False(e.Succeeded(failed));
        Assert.True(e.TryGetResult(failed + 1, out var next));
        Assert.Equal(40, next);
        Assert.Throws<ArgumentOutOfRangeException>(() => e.Succeeded(5L));
    }

    [Fact]
    public async Task FanOutAsync_ReadmeQuickStart_ReturnsThePagesInOrder()
    {
        // Issue 26 item 2: the README's line, verbatim; on net8.0 it bound the no-result overload (CS0029).
        using var http = new HttpClient(new EchoHandler());
        var urls = s_urls;
        var cancellationToken = CancellationToken.None;
        string[] pages = await urls.FanOutAsync(8, (url, ct) => http.GetStringAsync(url, ct), cancellationToken).WithTimeout();
        Assert.Equal(s_urls.Select(u => "page " + u), pages);
    }

    [Fact]
    public async Task FanOutAsync_OneArgumentBodies_ReturnInOrderAndHoldTheLimit()
    {
        using var http = new HttpClient(new EchoHandler());
        string[] pages = await s_urls.FanOutAsync(16, async url => await http.GetStringAsync(url)).WithTimeout();
        string[] direct = await s_urls.FanOutAsync(16, url => http.GetStringAsync(url)).WithTimeout();
        int[] lengths = await s_urls.FanOutAsync(2, url => new ValueTask<int>(url.Length)).WithTimeout();

        var probe = new ConcurrencyProbe();
        var ran = 0;
        await Enumerable.Range(0, 30).FanOutAsync(3, async _ =>
        {
            probe.Enter();
            try
            {
                await Task.Delay(1);
                Interlocked.Increment(ref ran);
            }
            finally
            {
                probe.Exit();
            }
        }).WithTimeout();

        Assert.Equal(s_urls.Select(u => "page " + u), pages);
        Assert.Equal(pages, direct);
        Assert.Equal(s_urls.Select(u => u.Length), lengths);
        Assert.Equal(30, ran);
        Assert.InRange(probe.Max, 1, 3);
    }

    [Fact]
    public async Task FanOutAsync_LimitBodyAndOptions_KeepsTheLimitAndTheOptions()
    {
        var probe = new ConcurrencyProbe();
        var e = await Assert.ThrowsAsync<FanOutException<int>>(() => Enumerable.Range(0, 20).FanOutAsync(
            2,
            async (i, ct) =>
            {
                probe.Enter();
                try
                {
                    await Task.Delay(1, ct);
                    return i == 5 ? throw new InvalidOperationException("five") : i;
                }
                finally
                {
                    probe.Exit();
                }
            },
            new FanOutOptions { Errors = ErrorMode.RunAll }).WithTimeout());

        // RunAll: the failure did not stop the other 19; the limit of 2 held throughout.
        Assert.Equal(5, e.Failures.Single().Index);
        Assert.True(e.TryGetResult(19, out var last));
        Assert.Equal(19, last);
        Assert.InRange(probe.Max, 1, 2);
    }

    [Fact]
    public void FanOutAsync_LimitAndOptionsWithALimit_ThrowsNamingOptions()
    {
        var options = new FanOutOptions { Limit = ConcurrencyLimit.Fixed(4) };
        var e = Assert.Throws<ArgumentException>(() => { _ = s_urls.FanOutAsync(8, (u, _) => Task.FromResult(u), options); });
        Assert.Equal("options", e.ParamName);
        Assert.Contains("pass the limit once", e.Message);
    }

    private sealed class EchoHandler : HttpMessageHandler
    {
        protected override Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken) =>
            Task.FromResult(new HttpResponseMessage(HttpStatusCode.OK) { Content = new StringContent("page " + request.RequestUri) });
    }
}
