using System.Threading.RateLimiting;

using FanOut.Downstream.Stats;

using Microsoft.AspNetCore.Http;

namespace FanOut.Downstream.Endpoints;

/// <summary><c>GET /stats</c> and <c>POST /stats/reset</c>; neither is rate-limited, queued or counted.</summary>
internal sealed class StatsEndpoints(ServerCounters counters, ConcurrencyLimiter capacity)
{
    /// <summary>The counters now, with the current queue length.</summary>
    public DownstreamStats Snapshot() => counters.Snapshot(queued: (int)(capacity.GetStatistics()?.CurrentQueuedCount ?? 0));

    public Task GetAsync(HttpContext context)
        => context.Response.WriteAsJsonAsync(Snapshot(), DownstreamJsonContext.Default.DownstreamStats, cancellationToken: context.RequestAborted);

    public Task ResetAsync(HttpContext context)
    {
        counters.Reset();
        context.Response.StatusCode = StatusCodes.Status204NoContent;
        return Task.CompletedTask;
    }
}
