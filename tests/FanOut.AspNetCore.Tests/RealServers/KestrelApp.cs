using System.Net;

using FanOut.AspNetCore.Admission;

using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.RateLimiting;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace FanOut.AspNetCore.Tests.RealServers;

/// <summary>The three ways a service puts FanOut's admission in front of its endpoints.</summary>
public enum Registration
{
    /// <summary><c>app.UseFanOutConcurrency()</c>.</summary>
    Middleware,

    /// <summary><c>AddRateLimiter(o => o.UseFanOutConcurrencyAsGlobalLimiter())</c> and <c>app.UseRateLimiter()</c>.</summary>
    GlobalLimiter,

    /// <summary><c>AddRateLimiter(o => o.AddFanOutConcurrencyPolicy())</c>, <c>app.UseRateLimiter()</c> and <c>RequireRateLimiting</c> on the endpoints.</summary>
    NamedPolicy,
}

/// <summary>A Kestrel app on loopback port 0 behind FanOut's admission, registered one of the three ways.</summary>
internal sealed class KestrelApp : IAsyncDisposable
{
    private KestrelApp(WebApplication app, Gate gate)
    {
        App = app;
        Gate = gate;
        Client = new HttpClient { BaseAddress = new Uri(app.Urls.First()) };
    }

    public WebApplication App { get; }

    public Gate Gate { get; }

    public HttpClient Client { get; }

    public RequestAdmission Admission => App.Services.GetRequiredService<RequestAdmission>();

    /// <summary>
    /// Starts an app: /work waits at the gate; /abortable waits for the client to leave, then returns; /throw throws;
    /// /status/{code} answers it; /healthz is exempt. <paramref name="map"/> adds endpoints under the same registration.
    /// </summary>
    public static async Task<KestrelApp> StartAsync(
        Registration registration,
        Action<FanOutConcurrencyOptions> configure,
        Action<IEndpointRouteBuilder>? map = null,
        Action<IServiceCollection>? services = null)
    {
        var gate = new Gate();
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.ConfigureKestrel(k => k.Listen(IPAddress.Loopback, 0));
        builder.Services.AddFanOutConcurrency(configure);
        services?.Invoke(builder.Services);
        switch (registration)
        {
            case Registration.GlobalLimiter:
                builder.Services.AddRateLimiter(o => o.UseFanOutConcurrencyAsGlobalLimiter());
                break;
            case Registration.NamedPolicy:
                builder.Services.AddRateLimiter(o => o.AddFanOutConcurrencyPolicy());
                break;
        }

        var app = builder.Build();
        if (registration == Registration.Middleware)
        {
            app.UseFanOutConcurrency();
        }
        else
        {
            app.UseRateLimiter();
        }

        var endpoints = app.MapGroup("");
        if (registration == Registration.NamedPolicy)
        {
            endpoints.RequireRateLimiting(FanOutConcurrencyLimiter.PolicyName);
        }

        endpoints.MapGet("/work", (string? id) => gate.PassAsync(id ?? ""));
        endpoints.MapGet("/critical", (string? id) => gate.PassAsync(id ?? "")).WithRequestPriority(RequestPriority.Critical);
        endpoints.MapGet("/abortable", async (HttpContext context) =>
        {
            await gate.PassAsync("abortable").WaitAsync(context.RequestAborted).ContinueWith(_ => { }, TaskScheduler.Default);
            return "the client left";
        });
        endpoints.MapGet("/throw", string () => throw new InvalidOperationException("the handler failed"));
        endpoints.MapGet("/timeout", string () => throw new InvalidOperationException("query failed", new TimeoutException()));
        endpoints.MapGet("/status/{code:int}", (int code) => Results.StatusCode(code));
        endpoints.MapGet("/healthz", () => "ok").DisableFanOutConcurrency();
        map?.Invoke(endpoints);
        await app.StartAsync();
        return new KestrelApp(app, gate);
    }

    public async ValueTask DisposeAsync()
    {
        Gate.OpenAll();
        Client.Dispose();
        await App.StopAsync();
        await App.DisposeAsync();
    }
}
