using FanOut.AspNetCore.Admission;

using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.TestHost;
using Microsoft.Extensions.DependencyInjection;

namespace FanOut.AspNetCore.Tests;

/// <summary>A minimal app on a TestServer behind UseFanOutConcurrency, whose /work handlers wait at a gate the test opens.</summary>
internal sealed class TestApp : IAsyncDisposable
{
    private TestApp(WebApplication app, Gate gate)
    {
        App = app;
        Gate = gate;
        Client = app.GetTestClient();
    }

    public WebApplication App { get; }

    public Gate Gate { get; }

    public HttpClient Client { get; }

    public RequestAdmission Admission => App.Services.GetRequiredService<RequestAdmission>();

    /// <summary>Starts an app: /work (normal), /critical, /sheddable wait at the gate; /healthz is exempt; /status/{code} answers it.</summary>
    public static async Task<TestApp> StartAsync(Action<FanOutConcurrencyOptions> configure, Action<WebApplication>? map = null)
    {
        var gate = new Gate();
        var builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.UseTestServer();
        // These tests judge order, not time: a queued request waits until the test lets it go, and a second on a loaded
        // machine is no timeout (two busy loops made it one). Tests of QueueTimeout set their own.
        builder.Services.AddFanOutConcurrency(o =>
        {
            o.QueueTimeout = TimeSpan.FromMinutes(1);
            configure(o);
        });
        var app = builder.Build();

        // An exception handler outside the limiter, as an app has one: /throw answers 500 (TestServer would rethrow to the client).
        app.Use(async (context, next) =>
        {
            try
            {
                await next(context);
            }
            catch (InvalidOperationException)
            {
                context.Response.StatusCode = StatusCodes.Status500InternalServerError;
            }
        });
        app.UseFanOutConcurrency();
        app.MapGet("/work", (string? id) => gate.PassAsync(id ?? ""));
        app.MapGet("/critical", (string? id) => gate.PassAsync(id ?? "")).WithRequestPriority(RequestPriority.Critical);
        app.MapGet("/sheddable", (string? id) => gate.PassAsync(id ?? "")).WithRequestPriority(RequestPriority.Sheddable);
        app.MapGet("/healthz", () => "ok").DisableFanOutConcurrency();
        app.MapGet("/status/{code:int}", (int code) => Results.StatusCode(code));
        app.MapGet("/throw", (HttpContext _) => ThrowingHandler());
        map?.Invoke(app);
        await app.StartAsync();
        return new TestApp(app, gate);
    }

    /// <summary>Sends GET <paramref name="path"/> and waits until its handler runs (it holds a permit); the response comes once the gate opens.</summary>
    public async Task<Task<HttpResponseMessage>> SendAdmittedAsync(string path)
    {
        var response = Client.GetAsync(path);
        await Gate.EnteredAsync();
        return response;
    }

    /// <summary>Sends GET <paramref name="path"/> and waits until <paramref name="queued"/> requests wait, this one among them.</summary>
    public async Task<Task<HttpResponseMessage>> SendQueuedAsync(string path, int queued, CancellationToken cancellationToken = default)
    {
        var response = Client.GetAsync(path, cancellationToken);
        await Wait.UntilAsync(() => Admission.Queued == queued, $"{path} queued ({queued} waiting)");
        return response;
    }

    /// <summary>Opens the gate and asserts that every one of <paramref name="responses"/> is a 200.</summary>
    public async Task OpenAndAssertAllOkAsync(params Task<HttpResponseMessage>[] responses)
    {
        Gate.OpenAll();
        foreach (var response in await Task.WhenAll(responses))
        {
            Assert.Equal(System.Net.HttpStatusCode.OK, response.StatusCode);
            response.Dispose();
        }
    }

    private static string ThrowingHandler() => throw new InvalidOperationException("the handler failed");

    public async ValueTask DisposeAsync()
    {
        Gate.OpenAll();
        Client.Dispose();
        await App.StopAsync();
        await App.DisposeAsync();
    }
}

/// <summary>Handlers wait here until the test opens the gate; the order they were let through is recorded.</summary>
internal sealed class Gate
{
    private readonly TaskCompletionSource _open = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly SemaphoreSlim _entered = new(0);
    private readonly List<string> _order = [];

    /// <summary>Ids of the handlers that ran, in the order they entered.</summary>
    public IReadOnlyList<string> Order
    {
        get
        {
            lock (_order)
            {
                return [.. _order];
            }
        }
    }

    public async Task<string> PassAsync(string id)
    {
        lock (_order)
        {
            _order.Add(id);
        }

        _entered.Release();
        await _open.Task;
        return id;
    }

    /// <summary>Waits until <paramref name="count"/> more handlers have entered (an event, not a clock).</summary>
    public async Task EnteredAsync(int count = 1)
    {
        for (var i = 0; i < count; i++)
        {
            Assert.True(await _entered.WaitAsync(TimeSpan.FromSeconds(30)), "a handler never started");
        }
    }

    public void OpenAll() => _open.TrySetResult();
}

internal static class Wait
{
    /// <summary>Polls <paramref name="condition"/> until it holds (state another thread changes); fails after 30 s.</summary>
    public static async Task UntilAsync(Func<bool> condition, string what)
    {
        for (var i = 0; i < 30_000 && !condition(); i++)
        {
            await Task.Delay(1);
        }

        Assert.True(condition(), what);
    }
}
