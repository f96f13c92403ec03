using FanOut.Downstream.Stats;

using Microsoft.AspNetCore.Http;

namespace FanOut.Downstream.Endpoints;

/// <summary><c>GET /stats</c> and <c>POST /stats/reset</c>; neither is rate-limited, queued or counted.</summary>
internal sealed class StatsEndpoints(ServerCounters counters, Func<DownstreamState> state)
{
    /// <summary>The counters now, with the server's settings and queue length now.</summary>
    public DownstreamStats Snapshot() => counters.Snapshot(state());

    public Task GetAsync(HttpContext context)
        => context.Response.WriteAsJsonAsync(Snapshot(), DownstreamJsonContext.Default.DownstreamStats, cancellationToken: context.RequestAborted);

    public Task ResetAsync(HttpContext context)
    {
        counters.Reset();
        context.Response.StatusCode = StatusCodes.Status204NoContent;
        return Task.CompletedTask;
    }
}
