using System.Net;
using System.Net.Http.Headers;

using FanOut.Http.Tests.Handlers;

namespace FanOut.Http.Tests.Composition;

/// <summary>
/// A FanOut loop whose bodies call an HttpClient whose handler uses the same limit (docs/limits.md's shared "orders" limit):
/// one permit per item, never a deadlock, and the loop's re-runs and the handler's re-sends on one attempt budget.
/// </summary>
public sealed class LoopThroughHandlerTests
{
    private static readonly TimeSpan s_hang = TimeSpan.FromSeconds(30);

    [Theory]
    [InlineData(1)]
    [InlineData(3)]
    public async Task Loop_BodiesCallThroughHandlerOnSameLimit_EveryItemOkWithinTheLimit(int capacity)
    {
        // Before: each item held a loop permit and waited for a handler permit of the same limit: once the loop held every
        // permit, nothing moved.
        var limit = ConcurrencyLimit.Fixed(capacity);
        var server = new CountingServer(HttpStatusCode.OK);
        using var client = Client(limit, server, new FanOutHttpOptions());

        var codes = await Enumerable.Range(0, 40).ToArray().FanOutAsync(
            async (i, ct) => (await client.GetAsync($"item/{i}", ct)).StatusCode,
            new FanOutOptions { Limit = limit }).WaitAsync(s_hang);

        Assert.All(codes, c => Assert.Equal(HttpStatusCode.OK, c));
        Assert.Equal(40, server.Calls);
        Assert.True(server.Peak <= capacity, $"{server.Peak} requests at once under a limit of {capacity}");
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public async Task Loop_DownstreamAlways429_EachItemSentAtMostOnePlusOverloadRetriesTimes()
    {
        // Before: the loop ran an item 1 + 8 times and the handler sent each run 1 + 8 times: 81 sends of one item. Now the
        // handler leaves the re-run to the call, which makes it.
        var limit = ConcurrencyLimit.Adaptive();
        var server = new CountingServer(HttpStatusCode.TooManyRequests, r => r.Headers.RetryAfter = new RetryConditionHeaderValue(TimeSpan.Zero));
        using var client = Client(limit, server, new FanOutHttpOptions());

        var run = new[] { 1 }.FanOutAsync(
            async (i, ct) =>
            {
                using var response = await client.GetAsync($"item/{i}", ct);
                if (response.StatusCode == HttpStatusCode.TooManyRequests)
                {
                    throw new OverloadedException("429 from the downstream", TimeSpan.Zero);
                }

                return i;
            },
            new FanOutOptions { Limit = limit, OverloadRetries = 8 });

        await Assert.ThrowsAsync<OverloadedException>(() => run.WaitAsync(s_hang));
        Assert.Equal(9, server.Calls);
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public async Task FixedLoop_DownstreamAlways429_TheHandlerResendsAndTheLoopDoesNot()
    {
        // A fixed limit never re-runs an item: the handler's re-sends are the only ones (1 + MaxResends sends).
        var limit = ConcurrencyLimit.Fixed(2);
        var server = new CountingServer(HttpStatusCode.TooManyRequests, r => r.Headers.RetryAfter = new RetryConditionHeaderValue(TimeSpan.Zero));
        using var client = Client(limit, server, new FanOutHttpOptions { MaxResends = 3 });

        var run = new[] { 1 }.FanOutAsync(async (i, ct) => await client.GetStringAsync($"item/{i}", ct), new FanOutOptions { Limit = limit });

        await Assert.ThrowsAsync<HttpRequestException>(() => run.WaitAsync(s_hang));
        Assert.Equal(4, server.Calls);
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public async Task HandlerOutsideALoop_KeepsItsOwnResends()
    {
        var limit = ConcurrencyLimit.Fixed(2);
        var server = new CountingServer(HttpStatusCode.TooManyRequests, r => r.Headers.RetryAfter = new RetryConditionHeaderValue(TimeSpan.Zero));
        using var client = Client(limit, server, new FanOutHttpOptions { MaxResends = 3 });

        using var response = await client.GetAsync("item/1").WaitAsync(s_hang);

        Assert.Equal(HttpStatusCode.TooManyRequests, response.StatusCode);
        Assert.Equal(4, server.Calls);
    }

    private static HttpClient Client(ConcurrencyLimit limit, HttpMessageHandler server, FanOutHttpOptions options)
    {
        var limits = new HostConcurrencyLimits(options with { LimitFactory = _ => limit });
        return new HttpClient(new FanOutLimitHandler(limits) { InnerHandler = server }) { BaseAddress = new Uri("http://downstream.test/") };
    }

    /// <summary>Answers every request with one status after a yield, counting calls and the most at once.</summary>
    private sealed class CountingServer(HttpStatusCode status, Action<HttpResponseMessage>? configure = null) : HttpMessageHandler
    {
        private int _calls;
        private int _current;
        private int _peak;

        public int Calls => Volatile.Read(ref _calls);

        public int Peak => Volatile.Read(ref _peak);

        protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
        {
            Interlocked.Increment(ref _calls);
            var now = Interlocked.Increment(ref _current);
            var seen = Volatile.Read(ref _peak);
            while (now > seen && Interlocked.CompareExchange(ref _peak, now, seen) != seen)
            {
                seen = Volatile.Read(ref _peak);
            }

            try
            {
                await Task.Yield();
                var response = new HttpResponseMessage(status) { RequestMessage = request };
                configure?.Invoke(response);
                return response;
            }
            finally
            {
                Interlocked.Decrement(ref _current);
            }
        }
    }
}
