using System.Net;
using System.Net.Http.Headers;

using Microsoft.Extensions.DependencyInjection;

namespace FanOut.Http.Tests.Handlers;

/// <summary>The handler's rules: what is re-sent and when, what the limit is told, and the permit held only in flight.</summary>
public sealed class FanOutLimitHandlerTests
{
    private static readonly TimeSpan s_hang = TimeSpan.FromSeconds(30);

    private static (HttpClient Client, RecordingLimit Limit, HostConcurrencyLimits Limits) Client(ScriptedServer server, TimeProvider time, FanOutHttpOptions? options = null, int limit = 4)
    {
        var recording = new RecordingLimit(limit, time);
        var limits = new HostConcurrencyLimits((options ?? new FanOutHttpOptions()) with { LimitFactory = _ => recording });
        var client = new HttpClient(new FanOutLimitHandler(limits) { InnerHandler = server }) { BaseAddress = new Uri("http://downstream.test/") };
        return (client, recording, limits);
    }

    private static Action<HttpResponseMessage> RetryAfter(TimeSpan delta) => r => r.Headers.RetryAfter = new RetryConditionHeaderValue(delta);

    [Fact]
    public async Task Get_429ThenOk_IsResentOnceAfterRetryAfterWithoutHoldingThePermit()
    {
        var time = new CountingTimeProvider();
        var server = new ScriptedServer(ScriptedServer.Status(HttpStatusCode.TooManyRequests, RetryAfter(TimeSpan.FromSeconds(2))), ScriptedServer.Status(HttpStatusCode.OK));
        var (client, limit, _) = Client(server, time);

        var sending = client.GetAsync("item/1");
        await time.WaitForTimersAsync(1); // the handler waits out the Retry-After
        Assert.Equal(1, server.Calls);
        Assert.Equal(0, limit.InFlight); // no permit held while waiting

        time.Advance(TimeSpan.FromSeconds(1.9));
        await Task.Delay(20); // a re-send too early would have a chance to show (not a bound: the count is checked)
        Assert.Equal(1, server.Calls);
        Assert.False(sending.IsCompleted);

        time.Advance(TimeSpan.FromSeconds(0.1));
        using var response = await sending.WaitAsync(s_hang);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(2, server.Calls);
        Assert.Equal([ItemOutcome.Overloaded, ItemOutcome.Succeeded], limit.Outcomes);
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public void DefaultLimitOptions_AreTheCoresButTheHttpPlacesSlowStartPace()
    {
        // FanOut.Http's per-place parameter (docs/adaptive.md, "one law"): slow start paced at one limit per round trip (its
        // growth opens connections); the rest the core's, the back-off included (its gentler 0.9 starved a client sharing a
        // small cap). The simulation suite's http place runs on these very options (LawPlace), so what they do is tested there.
        Assert.Equal(new AdaptiveLimitOptions() with { SlowStartPace = 1 }, FanOutHttpOptions.DefaultLimitOptions);
        var limit = new HostConcurrencyLimits().GetLimit(new Uri("http://downstream.test/"));
        Assert.Equal("adaptive", limit.Kind);
        Assert.Equal(FanOutHttpOptions.DefaultLimitOptions.InitialLimit, limit.Current);
    }

    [Fact]
    public async Task Get_429WithRetryAfter_PausesTheHostsAdaptiveLimitUntilItHasPassed_WhenTheRequestThatTestsItIsRefusedToo()
    {
        var time = new CountingTimeProvider();
        var server = new ScriptedServer(ScriptedServer.Status(HttpStatusCode.TooManyRequests, RetryAfter(TimeSpan.FromSeconds(2))), ScriptedServer.Status(HttpStatusCode.OK));
        var limits = new HostConcurrencyLimits(new FanOutHttpOptions { LimitFactory = _ => ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { TimeProvider = time }) });
        using var client = new HttpClient(new FanOutLimitHandler(limits) { InnerHandler = server }) { BaseAddress = new Uri("http://downstream.test/") };
        var limit = limits.GetLimit(new Uri("http://downstream.test/"));

        var sending = client.GetAsync("item/1");
        await time.WaitForTimersAsync(1); // the limit's pause, set as the lease went back (before the handler's wait)
        Assert.Equal(1, limit.Current); // no request of the host is out: one may test the pause
        Assert.True(limit.TryAcquire());
        limit.RecordCompletion(limit.RecordStart(), ItemOutcome.Overloaded, TimeSpan.FromSeconds(2)); // refused too
        limit.Release();
        Assert.Equal(0, limit.Current); // the host's other requests get no permit for the rest of the pause
        Assert.False(limit.TryAcquire());

        time.Advance(TimeSpan.FromSeconds(2));
        using var response = await sending.WaitAsync(s_hang);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(2, server.Calls);
        Assert.True(limit.Current >= 1);
    }

    [Fact]
    public async Task Get_503WithAnHttpDate_WaitsUntilThatDate()
    {
        var time = new CountingTimeProvider();
        var at = time.GetUtcNow().AddSeconds(30);
        var server = new ScriptedServer(ScriptedServer.Status(HttpStatusCode.ServiceUnavailable, r => r.Headers.RetryAfter = new RetryConditionHeaderValue(at)), ScriptedServer.Status(HttpStatusCode.OK));
        var (client, _, _) = Client(server, time);

        var sending = client.GetAsync("item/1");
        await time.WaitForTimersAsync(1);
        time.Advance(TimeSpan.FromSeconds(29));
        await Task.Delay(20);
        Assert.Equal(1, server.Calls);
        time.Advance(TimeSpan.FromSeconds(1));

        using var response = await sending.WaitAsync(s_hang);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(2, server.Calls);
    }

    [Fact]
    public async Task Post_429_IsNotResent()
    {
        var time = new CountingTimeProvider();
        var server = new ScriptedServer(ScriptedServer.Status(HttpStatusCode.TooManyRequests, RetryAfter(TimeSpan.Zero)), ScriptedServer.Status(HttpStatusCode.OK));
        var (client, limit, _) = Client(server, time);

        using var response = await client.PostAsync("orders", new StringContent("order 1")).WaitAsync(s_hang);

        Assert.Equal(HttpStatusCode.TooManyRequests, response.StatusCode);
        Assert.Equal(1, server.Calls);
        Assert.Equal([ItemOutcome.Overloaded], limit.Outcomes);
    }

    [Fact]
    public async Task Post_429_IsResentWithItsBodyWhenAllowed()
    {
        var time = new CountingTimeProvider();
        var server = new ScriptedServer(ScriptedServer.Status(HttpStatusCode.TooManyRequests, RetryAfter(TimeSpan.Zero)), ScriptedServer.Status(HttpStatusCode.OK));
        var (client, _, _) = Client(server, time, new FanOutHttpOptions { ResendNonIdempotent = true });

        // A stream can be read once: the handler buffers the content of a request it may re-send.
        using var content = new StreamContent(new MemoryStream("order 1"u8.ToArray()));
        using var response = await client.PostAsync("orders", content).WaitAsync(s_hang);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(["order 1", "order 1"], server.Bodies);
    }

    [Fact]
    public async Task Get_AlwaysOverloaded_StopsAfterMaxResendsAndReturnsTheLastAnswer()
    {
        var time = new CountingTimeProvider();
        var server = new ScriptedServer(ScriptedServer.Status(HttpStatusCode.TooManyRequests, RetryAfter(TimeSpan.Zero)));
        var (client, limit, _) = Client(server, time, new FanOutHttpOptions { MaxResends = 3 });

        using var response = await client.GetAsync("item/1").WaitAsync(s_hang);

        Assert.Equal(HttpStatusCode.TooManyRequests, response.StatusCode);
        Assert.Equal(4, server.Calls);
        Assert.All(limit.Outcomes, o => Assert.Equal(ItemOutcome.Overloaded, o));
    }

    [Fact]
    public async Task Get_RetryAfterAboveTheCap_IsReturnedAsItCame()
    {
        var time = new CountingTimeProvider();
        var server = new ScriptedServer(ScriptedServer.Status(HttpStatusCode.ServiceUnavailable, RetryAfter(TimeSpan.FromMinutes(5))), ScriptedServer.Status(HttpStatusCode.OK));
        var (client, _, _) = Client(server, time);

        using var response = await client.GetAsync("item/1").WaitAsync(s_hang);

        Assert.Equal(HttpStatusCode.ServiceUnavailable, response.StatusCode);
        Assert.Equal(1, server.Calls);
    }

    [Fact]
    public async Task Get_AttemptTimeout_BacksOffAndIsNotResent()
    {
        var time = new CountingTimeProvider();
        var server = new ScriptedServer(async (request, ct) =>
        {
            await Task.Delay(Timeout.Infinite, ct);
            return new HttpResponseMessage(HttpStatusCode.OK);
        });
        var (client, limit, _) = Client(server, time, new FanOutHttpOptions { AttemptTimeout = TimeSpan.FromSeconds(5) });

        var sending = client.GetAsync("item/1");
        await time.WaitForTimersAsync(1);
        time.Advance(TimeSpan.FromSeconds(5));

        var canceled = await Assert.ThrowsAsync<TaskCanceledException>(() => sending.WaitAsync(s_hang));
        Assert.IsType<TimeoutException>(canceled.InnerException);
        Assert.Equal(1, server.Calls);
        Assert.Equal([ItemOutcome.Overloaded], limit.Outcomes);
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public async Task Get_InnerTimeout_BacksOffAndIsNotResent()
    {
        // What an inner HttpClient, or a handler that times out like one, throws.
        var time = new CountingTimeProvider();
        var server = new ScriptedServer((_, _) => Task.FromException<HttpResponseMessage>(new TaskCanceledException("timed out", new TimeoutException())));
        var (client, limit, _) = Client(server, time);

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => client.GetAsync("item/1").WaitAsync(s_hang));

        Assert.Equal(1, server.Calls);
        Assert.Equal([ItemOutcome.Overloaded], limit.Outcomes);
    }

    [Fact]
    public async Task Get_ServerError_IsAFailureAndNotResent()
    {
        var time = new CountingTimeProvider();
        var server = new ScriptedServer(ScriptedServer.Status(HttpStatusCode.InternalServerError), ScriptedServer.Status(HttpStatusCode.OK));
        var (client, limit, _) = Client(server, time);

        using var response = await client.GetAsync("item/1").WaitAsync(s_hang);

        Assert.Equal(HttpStatusCode.InternalServerError, response.StatusCode);
        Assert.Equal(1, server.Calls);
        Assert.Equal([ItemOutcome.Failed], limit.Outcomes);
    }

    [Fact]
    public async Task AddFanOutLimit_TwoHosts_EachHasItsOwnLimitAndNeverExceedsIt()
    {
        const int PerHost = 3;
        const int RequestsPerHost = 20;
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var inFlight = new Dictionary<string, int> { ["a.test"] = 0, ["b.test"] = 0 };
        var peak = new Dictionary<string, int> { ["a.test"] = 0, ["b.test"] = 0 };
        var server = new ScriptedServer(async (request, ct) =>
        {
            var host = request.RequestUri!.Host;
            lock (inFlight)
            {
                peak[host] = Math.Max(peak[host], ++inFlight[host]);
            }

            await gate.Task.WaitAsync(ct);
            lock (inFlight)
            {
                inFlight[host]--;
            }

            return new HttpResponseMessage(HttpStatusCode.OK);
        });
        var limits = new HostConcurrencyLimits(new FanOutHttpOptions { LimitFactory = _ => ConcurrencyLimit.Fixed(PerHost) });
        var services = new ServiceCollection();
        services.AddHttpClient("fan").ConfigurePrimaryHttpMessageHandler(() => server).AddFanOutLimit(limits);
        await using var provider = services.BuildServiceProvider();
        var client = provider.GetRequiredService<IHttpClientFactory>().CreateClient("fan");

        var requests = Enumerable.Range(0, RequestsPerHost)
            .SelectMany(i => new[] { $"http://a.test/item/{i}", $"http://b.test/item/{i}" })
            .Select(uri => Task.Run(() => client.GetAsync(uri)))
            .ToList();
        for (var i = 0; i < 30_000 && server.Calls < 2 * PerHost; i++)
        {
            await Task.Delay(1);
        }

        await Task.Delay(50); // more than the limit would have had a chance to enter (not a bound: the peaks are checked)
        Assert.Equal(2 * PerHost, server.Calls);
        gate.SetResult();
        var responses = await Task.WhenAll(requests).WaitAsync(s_hang);

        Assert.All(responses, r => Assert.Equal(HttpStatusCode.OK, r.StatusCode));
        Assert.Equal(PerHost, peak["a.test"]);
        Assert.Equal(PerHost, peak["b.test"]);
        Assert.Equal(2, limits.Count);
        Assert.NotSame(limits.GetLimit(new Uri("http://a.test/")), limits.GetLimit(new Uri("http://b.test/")));
        Assert.Equal(0, limits.GetLimit(new Uri("http://a.test/")).InFlight);
    }

    [Fact]
    public void HostConcurrencyLimits_BeyondMaxHosts_FurtherHostsShareOneLimit()
    {
        var limits = new HostConcurrencyLimits(new FanOutHttpOptions { MaxHosts = 2, LimitFactory = _ => ConcurrencyLimit.Fixed(1) });

        var a = limits.GetLimit(new Uri("http://a.test/"));
        var b = limits.GetLimit(new Uri("http://b.test:8080/"));
        var c = limits.GetLimit(new Uri("http://c.test/"));
        var d = limits.GetLimit(new Uri("http://d.test/"));

        Assert.Same(a, limits.GetLimit(new Uri("http://A.TEST/other")));
        Assert.NotSame(b, limits.GetLimit(new Uri("http://b.test:8081/")));
        Assert.Same(c, d);
        Assert.Equal(2, limits.Count);
    }

    [Theory]
    [InlineData(nameof(FanOutHttpOptions.MaxResends))]
    [InlineData(nameof(FanOutHttpOptions.MaxHosts))]
    [InlineData(nameof(FanOutHttpOptions.AttemptTimeout))]
    [InlineData(nameof(FanOutHttpOptions.MaxRetryAfter))]
    public void Options_OutOfRange_ThrowNamingTheOption(string name)
    {
        var options = name switch
        {
            nameof(FanOutHttpOptions.MaxResends) => new FanOutHttpOptions { MaxResends = 101 },
            nameof(FanOutHttpOptions.MaxHosts) => new FanOutHttpOptions { MaxHosts = 0 },
            nameof(FanOutHttpOptions.AttemptTimeout) => new FanOutHttpOptions { AttemptTimeout = TimeSpan.Zero },
            _ => new FanOutHttpOptions { MaxRetryAfter = TimeSpan.FromSeconds(-1) },
        };

        var error = Assert.Throws<ArgumentOutOfRangeException>(() => new HostConcurrencyLimits(options));
        Assert.Equal(name, error.ParamName);
    }
}
