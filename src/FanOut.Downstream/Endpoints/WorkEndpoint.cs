using System.Diagnostics;
using System.Globalization;

using FanOut.Downstream.Control;
using FanOut.Downstream.Hosting;
using FanOut.Downstream.Latency;
using FanOut.Downstream.Stats;

using Microsoft.AspNetCore.Http;

namespace FanOut.Downstream.Endpoints;

/// <summary><c>GET /item/{id}</c> and <c>GET /price/{id}</c>: admission (crash, storm, rate, capacity/queue), simulated work, answer.</summary>
/// <remarks>
/// A request holds its capacity slot while it waits the sampled latency and writes its answer, so
/// at most N requests are "being served" at once and queued requests' latency grows by their wait.
/// </remarks>
internal sealed class WorkEndpoint
{
    private readonly CrashSwitch _crash;
    private readonly RequestRateBucket? _rateLimiter;
    private readonly RetryAfterStorm _storm;
    private readonly AdmissionGate _gate;
    private readonly LatencySampler _sampler;
    private readonly ServerCounters _counters;

    public WorkEndpoint(
        CrashSwitch crash,
        RequestRateBucket? rateLimiter,
        RetryAfterStorm storm,
        AdmissionGate gate,
        LatencySampler sampler,
        ServerCounters counters)
    {
        _crash = crash;
        _rateLimiter = rateLimiter;
        _storm = storm;
        _gate = gate;
        _sampler = sampler;
        _counters = counters;
    }

    public Task HandleItemAsync(HttpContext context) => ServeAsync(context, isPrice: false);

    public Task HandlePriceAsync(HttpContext context) => ServeAsync(context, isPrice: true);

    private async Task ServeAsync(HttpContext context, bool isPrice)
    {
        if (_crash.CountArrival())
        {
            context.Abort();
            return;
        }

        var arrived = Stopwatch.GetTimestamp();
        if (_storm.Left is { } stormLeft && stormLeft > TimeSpan.Zero)
        {
            _counters.OnRejectedStorm();
            context.Response.Headers.RetryAfter = ToRetryAfter(stormLeft);
            Reject(context, "storm");
            return;
        }

        if (_rateLimiter is not null)
        {
            // Checked before the queue, so a rate-limited request never takes a queue place.
            if (!_rateLimiter.TryTake(out var retryAfter))
            {
                _counters.OnRejectedRateLimit();
                context.Response.Headers.RetryAfter = ToRetryAfter(retryAfter);
                Reject(context, "rate-limit");
                return;
            }
        }

        // One token for both ways a request ends early: the client goes away, or the server crashes.
        using var abort = CancellationTokenSource.CreateLinkedTokenSource(context.RequestAborted, _crash.Token);
        bool admitted;
        _counters.OnArrivedAtGate(); // until it is turned away, leaves the queue or ends its service: see DownstreamStats.PeakAtGate
        try
        {
            // With a full queue this completes at once, turned away.
            admitted = await _gate.EnterAsync(abort.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            _counters.OnCancelledWhileQueued();
            context.Abort();
            return;
        }

        if (!admitted)
        {
            _counters.OnRejectedCapacity();
            Reject(context, "capacity");
            return;
        }

        _counters.OnServeStarted();
        var served = false;
        try
        {
            var workMs = _sampler.NextMilliseconds();
            await WaitAtLeastAsync(workMs, abort.Token).ConfigureAwait(false);

            var id = context.Request.RouteValues["id"] as string ?? "";
            var write = isPrice
                ? context.Response.WriteAsJsonAsync(new PriceResponse(id, PriceCatalog.PriceOf(id)), DownstreamJsonContext.Default.PriceResponse, cancellationToken: abort.Token)
                : context.Response.WriteAsJsonAsync(new ItemResponse(id, "item-" + id, workMs), DownstreamJsonContext.Default.ItemResponse, cancellationToken: abort.Token);
            await write.ConfigureAwait(false);
            served = true;
        }
        catch (Exception ex) when (ex is OperationCanceledException or IOException)
        {
            // Client gone or server crashed: drop the connection rather than answer.
            context.Abort();
        }
        finally
        {
            // Before the slot is given back: see ServerCounters.OnServeEnded.
            var latencyMicroseconds = (long)Stopwatch.GetElapsedTime(arrived).TotalMicroseconds;
            _counters.OnServeEnded(served, latencyMicroseconds);
            _gate.Exit();
        }
    }

    /// <summary>Waits at least <paramref name="milliseconds"/> by the high-resolution clock.</summary>
    /// <remarks>
    /// Task.Delay alone can end early: it truncates to whole milliseconds, and the runtime's timers
    /// run on a coarse tick (1-4 ms on Linux). Re-waiting the remainder makes "fixed:20" mean at
    /// least 20 ms, at the cost of a second timer only when the first fired early.
    /// </remarks>
    private static async Task WaitAtLeastAsync(double milliseconds, CancellationToken cancellationToken)
    {
        var started = Stopwatch.GetTimestamp();
        var remaining = milliseconds;
        while (remaining > 0)
        {
            await Task.Delay(TimeSpan.FromMilliseconds(Math.Ceiling(remaining)), cancellationToken).ConfigureAwait(false);
            remaining = milliseconds - Stopwatch.GetElapsedTime(started).TotalMilliseconds;
        }
    }

    private static void Reject(HttpContext context, string reason)
    {
        context.Response.StatusCode = StatusCodes.Status429TooManyRequests;
        context.Response.Headers["X-Reject-Reason"] = reason;
    }

    /// <summary>HTTP's Retry-After is whole seconds; round up, and never say 0 (that invites an immediate retry into the same empty bucket).</summary>
    private static string ToRetryAfter(TimeSpan wait)
        => Math.Max(1, (long)Math.Ceiling(wait.TotalSeconds)).ToString(CultureInfo.InvariantCulture);
}
