using System.Net;
using System.Threading.RateLimiting;

using FanOut.AspNetCore;

using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.RateLimiting;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace FanOut.Lab.ServerOverload;

/// <summary>
/// The service under test: a Kestrel app on 127.0.0.1 whose <c>/work</c> handler makes one call to the backend, protected
/// as an <see cref="OverloadRow"/> says. Every fifth request carries <c>X-Critical</c>; only the priorities row reads it.
/// </summary>
public sealed class OverloadApp : IAsyncDisposable
{
    private readonly IOverloadBackend _backend;
    private WebApplication? _app;
    private int _serving;

    private OverloadApp(IOverloadBackend backend, ConcurrencyLimit? limit)
    {
        _backend = backend;
        Limit = limit;
    }

    /// <summary>The header that marks a request critical.</summary>
    public const string CriticalHeader = "X-Critical";

    /// <summary>FanOut's limit for the FanOut rows (its <see cref="ConcurrencyLimit.Current"/> is the timeline); null for the others.</summary>
    public ConcurrencyLimit? Limit { get; }

    /// <summary>The handler's address.</summary>
    public Uri WorkUrl => new((_app ?? throw new InvalidOperationException("Not started.")).Urls.First() + "/work");

    /// <summary>Requests inside the handler right now (admitted, calling the backend or waiting for it).</summary>
    public int ServingNow => Volatile.Read(ref _serving);

    /// <summary>Starts the app for <paramref name="row"/> on a free loopback port.</summary>
    public static async Task<OverloadApp> StartAsync(OverloadRow row, IOverloadBackend backend)
    {
        ArgumentNullException.ThrowIfNull(row);
        ArgumentNullException.ThrowIfNull(backend);
        // The FanOut rows get the package's default limit (what Limit = null gives), held here to draw it over time.
        var limit = row.Kind is not (OverloadRowKind.FanOutAdaptive or OverloadRowKind.FanOutPriorities) ? null
            : row.FixedLimit is { } fixedLimit ? ConcurrencyLimit.Fixed(fixedLimit)
            : row.InitialLimit is not { } initial ? FanOutConcurrencyOptions.DefaultLimit(TimeProvider.System)
            : ConcurrencyLimit.Adaptive(FanOutConcurrencyOptions.DefaultLimitOptions with { InitialLimit = initial }); // DefaultLimit with the row's start
        var overload = new OverloadApp(backend, limit);
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.ConfigureKestrel(k => k.Listen(IPAddress.Loopback, 0));
        switch (row.Kind)
        {
            case OverloadRowKind.AspNetConcurrencyLimiter:
                builder.Services.AddRateLimiter(o =>
                {
                    o.RejectionStatusCode = StatusCodes.Status503ServiceUnavailable;
                    o.GlobalLimiter = PartitionedRateLimiter.Create<HttpContext, string>(_ => RateLimitPartition.GetConcurrencyLimiter(
                        "all", _ => new ConcurrencyLimiterOptions { PermitLimit = row.Permits, QueueLimit = row.Permits, QueueProcessingOrder = QueueProcessingOrder.OldestFirst }));
                });
                break;
            case OverloadRowKind.FanOutAdaptive:
                builder.Services.AddFanOutConcurrency(o =>
                {
                    o.Limit = limit;
                    o.QueuePerPermit = row.QueuePerPermit ?? o.QueuePerPermit;
                    o.PriorityReserve = row.PriorityReserve ?? o.PriorityReserve;
                    o.SheddableWaitPerServiceTime = row.SheddableWaitPerServiceTime ?? o.SheddableWaitPerServiceTime;
                    o.WatchThreadPoolLag = row.WatchThreadPoolLag;
                });
                break;
            case OverloadRowKind.FanOutPriorities:
                builder.Services.AddFanOutConcurrency(o =>
                {
                    o.Limit = limit;
                    o.QueuePerPermit = row.QueuePerPermit ?? o.QueuePerPermit;
                    o.PriorityReserve = row.PriorityReserve ?? o.PriorityReserve;
                    o.SheddableWaitPerServiceTime = row.SheddableWaitPerServiceTime ?? o.SheddableWaitPerServiceTime;
                    o.WatchThreadPoolLag = row.WatchThreadPoolLag;
                    o.PrioritySelector = c => c.Request.Headers.ContainsKey(CriticalHeader) ? RequestPriority.Critical : RequestPriority.Sheddable;
                });
                break;
        }

        var viaRateLimiter = row.ViaRateLimiter && row.Kind is OverloadRowKind.FanOutAdaptive or OverloadRowKind.FanOutPriorities;
        if (viaRateLimiter)
        {
            builder.Services.AddRateLimiter(o => o.UseFanOutConcurrencyAsGlobalLimiter());
        }

        var app = builder.Build();
        if (row.Kind == OverloadRowKind.AspNetConcurrencyLimiter || viaRateLimiter)
        {
            app.UseRateLimiter();
        }
        else if (row.Kind != OverloadRowKind.NoLimiter)
        {
            app.UseFanOutConcurrency();
        }

        app.MapGet("/work", (Delegate)overload.WorkAsync);
        overload._app = app;
        try
        {
            await app.StartAsync().ConfigureAwait(false);
        }
        catch
        {
            await overload.DisposeAsync().ConfigureAwait(false);
            throw;
        }

        return overload;
    }

    private async Task<IResult> WorkAsync(HttpContext context)
    {
        Interlocked.Increment(ref _serving);
        try
        {
            await _backend.CallAsync(context.RequestAborted).ConfigureAwait(false);
            return Microsoft.AspNetCore.Http.Results.Text("ok");
        }
        catch (Exception) when (context.RequestAborted.IsCancellationRequested)
        {
            return Microsoft.AspNetCore.Http.Results.Empty; // the client is gone
        }
        finally
        {
            Interlocked.Decrement(ref _serving);
        }
    }

    /// <summary>Stops the app.</summary>
    public async ValueTask DisposeAsync()
    {
        if (_app is { } app)
        {
            _app = null;
            await app.StopAsync().ConfigureAwait(false);
            await app.DisposeAsync().ConfigureAwait(false);
        }
    }
}
