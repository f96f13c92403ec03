using System.Threading.RateLimiting;

using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Http.Resilience;

using Polly;

namespace FanOut.Http.Tests.RateLimiting;

/// <summary>Microsoft.Extensions.Http.Resilience's rate limiter on the bridge, sharing one budget with a FanOutAsync loop.</summary>
public sealed class HttpResilienceTests
{
    private const int Limit = 4;
    private const int LoopItems = 150;
    private const int Requests = 150;

    [Fact]
    public Task AddResilienceHandler_AddRateLimiter_SharedWithFanOutAsync_NeverExceedsTheLimitTogether() =>
        AssertSharedWithFanOutAsync((client, limiter) => client.AddResilienceHandler("fanout", pipeline => pipeline.AddRateLimiter(limiter)));

    [Fact]
    public Task StandardResilienceHandler_RateLimiterOption_SharedWithFanOutAsync_NeverExceedsTheLimitTogether() =>
        AssertSharedWithFanOutAsync((client, limiter) => client.AddStandardResilienceHandler(options =>
            options.RateLimiter.RateLimiter = args => limiter.AcquireAsync(1, args.Context.CancellationToken)));

    /// <summary>
    /// Sends <see cref="Requests"/> requests through a client whose resilience handler <paramref name="addResilience"/> adds
    /// (its rate limiter: a <c>Fixed(Limit)</c>'s bridge) while a FanOutAsync loop of <see cref="LoopItems"/> runs on the same
    /// limit: together they never exceed it.
    /// </summary>
    private static async Task AssertSharedWithFanOutAsync(Action<IHttpClientBuilder, RateLimiter> addResilience)
    {
        var limit = ConcurrencyLimit.Fixed(Limit);
        using var limiter = limit.AsRateLimiter();
        var budget = new SharedBudget();
        var services = new ServiceCollection();
        var builder = services.AddHttpClient("downstream", c => c.BaseAddress = new Uri("http://downstream.test/"))
            .ConfigurePrimaryHttpMessageHandler(() => new WorkHandler(budget));
        addResilience(builder, limiter);
        await using var provider = services.BuildServiceProvider();
        var client = provider.GetRequiredService<IHttpClientFactory>().CreateClient("downstream");

        await budget.RunBothSidesAsync(limit, LoopItems, Requests, async i =>
        {
            using var request = new HttpRequestMessage(HttpMethod.Get, $"item/{i}");
            request.Options.Set(WorkHandler.First, i == 0);
            using var response = await client.SendAsync(request);
            response.EnsureSuccessStatusCode();
        });

        budget.AssertWithin(limit, LoopItems, Requests);
    }

    /// <summary>The downstream: each request is one unit of the pipeline side's work.</summary>
    private sealed class WorkHandler(SharedBudget budget) : HttpMessageHandler
    {
        public static readonly HttpRequestOptionsKey<bool> First = new("first");

        protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
        {
            request.Options.TryGetValue(First, out var first);
            await budget.WorkAsync(SharedBudget.Pipeline, first, cancellationToken);
            return new HttpResponseMessage(System.Net.HttpStatusCode.OK) { RequestMessage = request };
        }
    }
}
