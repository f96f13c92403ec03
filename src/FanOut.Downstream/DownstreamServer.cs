using FanOut.Downstream.Control;
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
/// rate limits), <c>GET /stats</c>, <c>POST /stats/reset</c>, <c>PUT /control</c> (capacity, queue, latency, a
/// Retry-After storm, at run time: <see cref="Apply"/>). HTTP/1.1 over plain TCP; no logging
/// providers (silent); no Ctrl+C handling (the host process owns that and calls <see cref="StopAsync"/>).
/// </remarks>
public sealed class DownstreamServer : IAsyncDisposable
{
    /// <summary>How long <see cref="StopAsync"/> and <see cref="DisposeAsync"/> let in-flight requests finish before aborting them.</summary>
    public static readonly TimeSpan DrainTimeout = TimeSpan.FromSeconds(2);

    private readonly WebApplication _app;
    private readonly CrashSwitch _crash;
    private readonly RequestRateBucket? _rateLimiter;
    private readonly AdmissionGate _gate;
    private readonly RetryAfterStorm _storm;
    private readonly LatencySampler _sampler;
    private readonly Lock _controlLock = new();
    private readonly ServerCounters _counters;
    private readonly StatsEndpoints _stats;
    private readonly TaskCompletionSource _stopped = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private string _phase = StartPhase;
    private int _stopStarted;
    private int _disposed;

    private DownstreamServer(DownstreamOptions options)
    {
        Options = options;
        _counters = new ServerCounters();
        _crash = new CrashSwitch(options.CrashAfterRequests, OnCrashTripped);
        _gate = new AdmissionGate(options.Capacity, options.Queue);
        _storm = new RetryAfterStorm(options.TimeProvider);
        _sampler = new LatencySampler(options.Latency, options.Seed);
        if (options.RatePerSecond is { } rate)
        {
            _rateLimiter = new RequestRateBucket(rate, options.EffectiveRateBurst, options.TimeProvider);
        }

        _stats = new StatsEndpoints(_counters, State);
        var work = new WorkEndpoint(_crash, _rateLimiter, _storm, _gate, _sampler, _counters);
        var control = new ControlEndpoint(Apply, _stats);

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
        _app.MapPut("/control", (RequestDelegate)control.PutAsync);
    }

    /// <summary>The phase <c>/stats</c> reports until a change names another.</summary>
    public const string StartPhase = "start";

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

    /// <summary>The capacity in effect: <see cref="DownstreamOptions.Capacity"/>, unless a change set another.</summary>
    public int CurrentCapacity => _gate.Capacity;

    /// <summary>The name of the phase the server plays now (<see cref="StartPhase"/> until a change names another).</summary>
    public string CurrentPhase => Volatile.Read(ref _phase);

    /// <summary>Changes the capacity while the server runs (a downstream losing half its instances): at most <paramref name="capacity"/> requests are served at once from now on; those being served finish.</summary>
    /// <param name="capacity">1 to <see cref="DownstreamOptions.MaxCapacity"/>.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="capacity"/> is outside that range; the message names it and the range.</exception>
    public void SetCapacity(int capacity) => Apply(new DownstreamChange { Capacity = capacity });

    /// <summary>Changes the running server: the settings <paramref name="change"/> gives take effect together, the rest stay.</summary>
    /// <param name="change">Capacity, queue, latency, a Retry-After storm, a phase name; see <see cref="DownstreamChange"/>.</param>
    /// <remarks>
    /// Capacity and queue change in one step under the admission gate's lock: a lower capacity lets the requests being served
    /// finish and admits none above it until they have; a shorter queue answers 429 to its newest waiters beyond it; a higher
    /// capacity admits waiters at once. A new latency applies to requests that start their work from now on. Changes are
    /// applied one at a time, so two concurrent changes never interleave their settings.
    /// </remarks>
    /// <exception cref="ArgumentNullException"><paramref name="change"/> is null.</exception>
    /// <exception cref="ArgumentException">A setting is invalid (see <see cref="DownstreamChange.Validate"/>); nothing changed.</exception>
    public void Apply(DownstreamChange change)
    {
        ArgumentNullException.ThrowIfNull(change);
        change.Validate();
        lock (_controlLock)
        {
            if (change.Capacity is not null || change.Queue is not null)
            {
                _gate.Resize(change.Capacity ?? _gate.Capacity, change.Queue ?? _gate.QueueLimit);
            }

            if (change.Latency is { } latency)
            {
                _sampler.Spec = latency;
            }

            if (change.RetryAfterStorm is { } storm)
            {
                _storm.Start(storm);
            }

            if (change.Phase is { } phase)
            {
                Volatile.Write(ref _phase, phase);
            }
        }
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

    /// <summary>The settings now, for <c>/stats</c>; under the control lock so they come from one change, not two.</summary>
    private DownstreamState State()
    {
        lock (_controlLock)
        {
            return new DownstreamState(_gate.Queued, _gate.Capacity, _gate.QueueLimit, _sampler.Spec.ToString(), _phase, Math.Round(_storm.Left.TotalSeconds, 3));
        }
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
