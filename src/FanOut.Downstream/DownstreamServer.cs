using System.Threading.RateLimiting;

using FanOut.Downstream.Endpoints;
using FanOut.Downstream.Hosting;
using FanOut.Downstream.Latency;
using FanOut.Downstream.Stats;

using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;

namespace FanOut.Downstream;

/// <summary>A real HTTP downstream service on Kestrel, loopback only, started and stopped in-process.</summary>
/// <remarks>
/// Endpoints: <c>GET /item/{id}</c>, <c>GET /price/{id}</c> (simulated work under capacity, queue and
/// rate limits), <c>GET /stats</c>, <c>POST /stats/reset</c>. HTTP/1.1 over plain TCP; no logging
/// providers (silent); no Ctrl+C handling (the host process owns that and calls <see cref="StopAsync"/>).
/// </remarks>
public sealed class DownstreamServer : IAsyncDisposable
{
    /// <summary>How long <see cref="StopAsync"/> and <see cref="DisposeAsync"/> let in-flight requests finish before aborting them.</summary>
    public static readonly TimeSpan DrainTimeout = TimeSpan.FromSeconds(2);

    private readonly WebApplication _app;
    private readonly CrashSwitch _crash;
    private readonly TokenBucketRateLimiter? _rateLimiter;
    private readonly ConcurrencyLimiter _capacity;
    private readonly CapacityCeiling _ceiling;
    private readonly ServerCounters _counters;
    private readonly StatsEndpoints _stats;
    private readonly TaskCompletionSource _stopped = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _stopStarted;
    private int _disposed;

    private DownstreamServer(DownstreamOptions options)
    {
        Options = options;
        _counters = new ServerCounters(options.Capacity);
        _crash = new CrashSwitch(options.CrashAfterRequests, OnCrashTripped);
        _capacity = new ConcurrencyLimiter(new ConcurrencyLimiterOptions
        {
            PermitLimit = options.Capacity,
            QueueLimit = options.Queue,
            QueueProcessingOrder = QueueProcessingOrder.OldestFirst,
        });
        var period = TimeSpan.Zero;
        if (options.RatePerSecond is { } rate)
        {
            var burst = options.EffectiveRateBurst;

            // Refill at most every 10 ms (a timer per millisecond would cost more than it models), in
            // whole tokens, with the period stretched to match so the long-run rate is exactly R.
            var tokensPerPeriod = (int)Math.Clamp(Math.Ceiling(rate / 100), 1, burst);
            period = TimeSpan.FromSeconds(tokensPerPeriod / rate);
            _rateLimiter = new TokenBucketRateLimiter(new TokenBucketRateLimiterOptions
            {
                TokenLimit = burst,
                TokensPerPeriod = tokensPerPeriod,
                ReplenishmentPeriod = period,
                QueueLimit = 0,
                AutoReplenishment = true,
            });
        }

        _stats = new StatsEndpoints(_counters, _capacity);
        _ceiling = new CapacityCeiling(options.Capacity);
        var work = new WorkEndpoint(_crash, _rateLimiter, period, _capacity, _ceiling, new LatencySampler(options.Latency, options.Seed), _counters);

        // The empty builder: no configuration files, no logging providers (no console spam), no
        // IIS/static files/HTTPS; start and stop take milliseconds.
        var builder = WebApplication.CreateEmptyBuilder(new WebApplicationOptions { ApplicationName = typeof(DownstreamServer).Assembly.GetName().Name });
        builder.WebHost.UseKestrelCore().ConfigureKestrel(kestrel =>
        {
            kestrel.AddServerHeader = false;
            // HTTP/1.1 only: over cleartext there is nothing to negotiate HTTP/2 with, and one
            // request per connection makes "C concurrent requests = C connections" exact.
            kestrel.Listen(options.Address, options.Port, listen => listen.Protocols = HttpProtocols.Http1);
        });
        builder.Services.AddRoutingCore();
        _app = builder.Build();
        _app.Use(AbortIfCrashed);
        _app.Use(LoopbackGuard.Middleware(_counters));
        _app.MapGet("/item/{id}", (RequestDelegate)work.HandleItemAsync);
        _app.MapGet("/price/{id}", (RequestDelegate)work.HandlePriceAsync);
        _app.MapGet("/stats", (RequestDelegate)_stats.GetAsync);
        _app.MapPost("/stats/reset", (RequestDelegate)_stats.ResetAsync);
    }

    /// <summary>The options this server runs with (validated).</summary>
    public DownstreamOptions Options { get; }

    /// <summary>Where the server listens, e.g. <c>http://127.0.0.1:41873/</c> (the real port when <see cref="DownstreamOptions.Port"/> is 0).</summary>
    public Uri BaseAddress { get; private set; } = null!;

    /// <summary>True once the server has crashed (after <see cref="DownstreamOptions.CrashAfterRequests"/> or <see cref="CrashAsync"/>).</summary>
    public bool HasCrashed => _crash.HasTripped;

    /// <summary>Validates <paramref name="options"/>, binds the listener and starts serving.</summary>
    /// <param name="options">The options; see <see cref="DownstreamOptions.Validate"/>.</param>
    /// <param name="cancellationToken">Cancels the start.</param>
    /// <returns>The running server; dispose it (or call <see cref="StopAsync"/>) to stop.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="options"/> is null.</exception>
    /// <exception cref="ArgumentException">An option is invalid, e.g. a non-loopback address.</exception>
    /// <exception cref="IOException">The port is in use.</exception>
    public static async Task<DownstreamServer> StartAsync(DownstreamOptions options, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        var server = new DownstreamServer(options);
        try
        {
            await server._app.StartAsync(cancellationToken).ConfigureAwait(false);
            var address = server._app.Services.GetRequiredService<IServer>().Features
                .Get<IServerAddressesFeature>()?.Addresses.Single()
                ?? throw new InvalidOperationException("Kestrel did not report the address it listens on.");
            server.BaseAddress = new Uri(address.TrimEnd('/') + "/");
            return server;
        }
        catch
        {
            await server.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    /// <summary>The server-side counters now (the same document as <c>GET /stats</c>); works after a crash too.</summary>
    /// <returns>A consistent snapshot.</returns>
    public DownstreamStats GetStats() => _stats.Snapshot();

    /// <summary>Requests being served right now, read without allocating (for a 1 ms sampler; <see cref="GetStats"/> allocates).</summary>
    public int InFlightNow => _counters.InFlight;

    /// <summary>The capacity in effect: <see cref="DownstreamOptions.Capacity"/>, unless <see cref="SetCapacity"/> changed it.</summary>
    public int CurrentCapacity => _ceiling.Current;

    /// <summary>Changes the capacity while the server runs (a downstream losing half its instances): at most <paramref name="capacity"/> requests are served at once from now on; those being served finish.</summary>
    /// <param name="capacity">1 to <see cref="DownstreamOptions.Capacity"/>.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="capacity"/> is outside that range; the message names it and the range.</exception>
    public void SetCapacity(int capacity)
    {
        if (capacity < 1 || capacity > Options.Capacity)
        {
            throw new ArgumentOutOfRangeException(nameof(capacity), capacity, $"capacity must be in [1, {Options.Capacity}] (the configured Capacity); got {capacity}.");
        }

        _ceiling.Set(capacity);
    }

    /// <summary>Zeroes the counters (the same as <c>POST /stats/reset</c>).</summary>
    public void ResetStats() => _counters.Reset();

    /// <summary>Stops gracefully: closes the listener and idle connections, lets in-flight requests finish for up to <see cref="DrainTimeout"/> (or until <paramref name="cancellationToken"/>), then aborts the rest.</summary>
    /// <param name="cancellationToken">Cuts the drain short.</param>
    /// <returns>A task that completes when the server is stopped; calling again (or after a crash) waits for the same stop.</returns>
    public async Task StopAsync(CancellationToken cancellationToken = default)
    {
        using var drain = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        drain.CancelAfter(DrainTimeout);
        await StopOnceAsync(drain.Token).ConfigureAwait(false);
    }

    /// <summary>Crashes the server now, as <see cref="DownstreamOptions.CrashAfterRequests"/> would: aborts every connection and closes the listener.</summary>
    /// <returns>A task that completes when the listener is closed; later requests fail with connection refused.</returns>
    public Task CrashAsync()
    {
        _crash.Trip();
        return _stopped.Task;
    }

    /// <summary>Stops (as <see cref="StopAsync"/>) and releases the server's resources.</summary>
    /// <returns>A task that completes when everything is released.</returns>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        await StopAsync(CancellationToken.None).ConfigureAwait(false);
        await _app.DisposeAsync().ConfigureAwait(false);
        _rateLimiter?.Dispose();
        _capacity.Dispose();
        _crash.Dispose();
    }

    /// <summary>Runs on the thread that tripped the switch: stop on the thread pool so that request returns at once.</summary>
    private void OnCrashTripped()
        => _ = Task.Run(() => StopOnceAsync(new CancellationToken(canceled: true)));

    /// <summary>Stops the host once, whoever asks first (StopAsync, a crash, DisposeAsync); everyone waits for that one stop.</summary>
    /// <remarks>A second Host.StopAsync would race the first over Kestrel's connection manager.</remarks>
    private async Task StopOnceAsync(CancellationToken abortAfter)
    {
        if (Interlocked.Exchange(ref _stopStarted, 1) == 0)
        {
            try
            {
                // Kestrel unbinds first, then waits for connections until abortAfter fires, then aborts them.
                await _app.StopAsync(abortAfter).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                // The drain ran out; Kestrel has aborted what was left.
            }
            finally
            {
                _stopped.TrySetResult();
            }
        }

        await _stopped.Task.ConfigureAwait(false);
    }

    private Task AbortIfCrashed(HttpContext context, RequestDelegate next)
    {
        if (_crash.HasTripped)
        {
            // Between the trip and the listener closing, a new connection can still be accepted: drop it.
            context.Abort();
            return Task.CompletedTask;
        }

        return next(context);
    }
}
