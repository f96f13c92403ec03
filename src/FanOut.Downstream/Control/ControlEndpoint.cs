using FanOut.Downstream.Endpoints;

using Microsoft.AspNetCore.Http;

namespace FanOut.Downstream.Control;

/// <summary><c>PUT /control?capacity=16&amp;queue=0&amp;latency=...&amp;storm=2&amp;phase=halved</c>: changes the running server (see <see cref="DownstreamChange"/>).</summary>
/// <remarks>Answers 200 with the <c>/stats</c> document after the change, or 400 with one line naming the bad setting or value
/// and the valid ones (nothing changes then). Like <c>/stats</c>, it is never limited or counted; the loopback guard applies.</remarks>
internal sealed class ControlEndpoint(Action<DownstreamChange> apply, StatsEndpoints stats)
{
    public Task PutAsync(HttpContext context)
    {
        var settings = context.Request.Query.SelectMany(q => q.Value.Select(v => KeyValuePair.Create(q.Key, v ?? string.Empty)));
        if (!DownstreamChange.TryParse(settings, out var change, out var error))
        {
            context.Response.StatusCode = StatusCodes.Status400BadRequest;
            context.Response.ContentType = "text/plain; charset=utf-8";
            return context.Response.WriteAsync(error + "\n", context.RequestAborted);
        }

        apply(change!);
        return stats.GetAsync(context);
    }
}
