using System.Globalization;
using System.Threading.RateLimiting;

using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;

namespace FanOut.AspNetCore;

/// <summary>
/// Runs each request holding a lease of <see cref="FanOutConcurrencyLimiter"/>; the lease gives the permit back and tells the
/// limit how the request ended when it is disposed, on every path. Refuses with a status code and Retry-After at once.
/// </summary>
internal sealed class FanOutConcurrencyMiddleware
{
    private readonly RequestDelegate _next;
    private readonly FanOutConcurrencyLimiter _limiter;
    private readonly string _retryAfter;

    public FanOutConcurrencyMiddleware(RequestDelegate next, FanOutConcurrencyLimiter limiter, IServiceProvider services)
    {
        _next = next;
        _limiter = limiter;
        _retryAfter = ((long)limiter.RetryAfter.TotalSeconds).ToString(CultureInfo.InvariantCulture);

        // Built with the pipeline, at startup: an endpoint with an unknown priority stops the host here, not at its first request.
        if (services.GetService(typeof(EndpointDataSource)) is EndpointDataSource endpoints)
        {
            CheckPriorities(endpoints);
        }
    }

    public async Task InvokeAsync(HttpContext context)
    {
        RateLimitLease lease;
        try
        {
            lease = await _limiter.AcquireMarkingExceptionsAsync(context, context.RequestAborted).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (context.RequestAborted.IsCancellationRequested)
        {
            return; // the client went away while it waited: nobody reads an answer
        }

        using (lease)
        {
            if (!lease.IsAcquired)
            {
                context.Response.StatusCode = _limiter.RejectionStatusCode;
                context.Response.Headers.RetryAfter = _retryAfter;
                return;
            }

            try
            {
                await _next(context).ConfigureAwait(false);
            }
            catch (Exception exception)
            {
                // The lease is disposed while this unwinds, before any exception handler outside sets a status: tell it here.
                FanOutConcurrencyLimiter.MarkFailed(context, exception);
                throw;
            }
        }
    }

    private static void CheckPriorities(EndpointDataSource endpoints)
    {
        foreach (var endpoint in endpoints.Endpoints)
        {
            if (endpoint.Metadata.GetMetadata<IRequestPriorityMetadata>() is { } metadata && !Enum.IsDefined(metadata.Priority))
            {
                throw new InvalidOperationException(
                    $"Endpoint '{endpoint.DisplayName}' has request priority {(int)metadata.Priority}: it must be one of {string.Join(", ", Enum.GetNames<RequestPriority>())}.");
            }
        }
    }
}
