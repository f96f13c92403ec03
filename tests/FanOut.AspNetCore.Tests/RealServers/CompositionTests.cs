using System.Net;

using FanOut.AspNetCore.Tests.Middleware;

using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace FanOut.AspNetCore.Tests.RealServers;

/// <summary>
/// Part 4 of issue 37, on real Kestrel: a service admits its requests with FanOut.AspNetCore, each request fans out to a
/// dependency through FanOut.Http's <c>AddFanOutLimit()</c>, and a background loop calls the same dependency under the
/// same limit. Under overload the dependency never sees more than its limit, and nothing waits forever.
/// </summary>
public sealed class CompositionTests
{
    private const int DependencyLimit = 3;

    [Theory]
    [InlineData(Registration.Middleware)]
    [InlineData(Registration.GlobalLimiter)]
    [InlineData(Registration.NamedPolicy)]
    public async Task Overload_RequestsFanOutThroughAddFanOutLimitBesideALoop_DependencyNeverPastItsLimitAndNothingHangs(Registration registration)
    {
        var dependency = new SimulatedDependency();
        await using var backend = await StartDependencyAsync(dependency);
        var depUri = new Uri(backend.Urls.First() + "/dep");
        var depLimit = ConcurrencyLimit.Fixed(DependencyLimit);
        var serverLimit = ConcurrencyLimit.Fixed(4);
        await using var app = await KestrelApp.StartAsync(
            registration,
            o => { o.Limit = serverLimit; o.QueuePerPermit = 1; },
            map: endpoints => endpoints.MapGet("/fan", async (IHttpClientFactory factory, HttpContext context) =>
            {
                // Three calls per request, each under a permit of the dependency's limit (the handler's), none held while waiting for another.
                var client = factory.CreateClient("dependency");
                await Enumerable.Range(0, 3).FanOutAsync(
                    async (i, ct) =>
                    {
                        using var response = await client.GetAsync(depUri, ct);
                        response.EnsureSuccessStatusCode();
                    },
                    new FanOutOptions(),
                    cancellationToken: context.RequestAborted);
                return "ok";
            }),
            services: s => s.AddHttpClient("dependency").AddFanOutLimit(_ => depLimit));
        using var plain = new HttpClient();

        // The loop's items take the same limit's permits themselves (FanOutOptions.Limit) and call the dependency directly.
        var loop = Enumerable.Range(0, 150).FanOutAsync(
            async (i, ct) =>
            {
                using var response = await plain.GetAsync(depUri, ct);
                response.EnsureSuccessStatusCode();
            },
            new FanOutOptions { Limit = depLimit });
        var requests = Enumerable.Range(0, 120).Select(_ => app.Client.GetAsync("/fan")).ToArray();
        var responses = await Task.WhenAll(requests).WaitAsync(TimeSpan.FromSeconds(60)); // a guard against a deadlock, not a timing
        await loop.WaitAsync(TimeSpan.FromSeconds(60));

        Assert.All(responses, r => Assert.True(
            r.StatusCode == HttpStatusCode.OK || (r.StatusCode == HttpStatusCode.ServiceUnavailable && r.Headers.RetryAfter is not null),
            $"{(int)r.StatusCode}: neither served nor refused with Retry-After"));
        var served = responses.Count(r => r.StatusCode == HttpStatusCode.OK);
        Assert.InRange(served, 1, 119); // overloaded: some served, some refused
        Assert.Equal(150 + (3 * served), dependency.Calls);
        Assert.InRange(dependency.Peak, 1, DependencyLimit);
        Assert.Equal(0, depLimit.InFlight);
        await Wait.UntilAsync(() => serverLimit.InFlight == 0 && app.Admission.Held == 0, "every request's permit went back");
        foreach (var response in responses)
        {
            response.Dispose();
        }
    }

    /// <summary>The dependency: a Kestrel app whose /dep counts the calls inside it at once.</summary>
    private static async Task<WebApplication> StartDependencyAsync(SimulatedDependency dependency)
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.ConfigureKestrel(k => k.Listen(IPAddress.Loopback, 0));
        var app = builder.Build();
        app.MapGet("/dep", async () => { await dependency.CallAsync(); return "done"; });
        await app.StartAsync();
        return app;
    }
}
