using System.Threading.RateLimiting;

using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.TestHost;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;

namespace FanOut.Http.Tests.RateLimiting;

/// <summary>ASP.NET Core's rate-limiting middleware (on a TestServer) on the bridge, sharing one budget with a FanOutAsync loop.</summary>
public sealed class AspNetCoreRateLimiterTests
{
    private const int Limit = 4;
    private const int LoopItems = 150;
    private const int Requests = 150;

    [Fact]
    public async Task UseRateLimiter_GlobalLimiterOnTheLimit_SharedWithFanOutAsync_NeverExceedsTheLimitTogether()
    {
        var limit = ConcurrencyLimit.Fixed(Limit);
        var budget = new SharedBudget();
        var builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.UseTestServer();
        builder.Services.AddRateLimiter(options =>
        {
            // One partition whose limiter is the limit's: the middleware may dispose an idle partition's limiter and make
            // another; every limiter made from one limit shares its permits, so that changes nothing.
            options.GlobalLimiter = PartitionedRateLimiter.Create<HttpContext, string>(
                _ => RateLimitPartition.Get("downstream", _ => limit.AsRateLimiter()));
            options.RejectionStatusCode = StatusCodes.Status503ServiceUnavailable;
        });
        await using var app = builder.Build();
        app.UseRateLimiter();
        app.MapGet("/item/{i:int}", async (int i, CancellationToken ct) =>
        {
            await budget.WorkAsync(SharedBudget.Pipeline, i == 0, ct);
            return Results.Ok();
        });
        await app.StartAsync();
        var client = app.GetTestClient();

        await budget.RunBothSidesAsync(limit, LoopItems, Requests, async i =>
        {
            using var response = await client.GetAsync($"/item/{i}");
            response.EnsureSuccessStatusCode();
        });
        await app.StopAsync();

        budget.AssertWithin(limit, LoopItems, Requests);
    }
}
