using System.Globalization;

using FanOut.AspNetCore.Admission;

using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace FanOut.AspNetCore;

/// <summary>
/// Admits each request to the limit (<see cref="RequestAdmission"/>), runs it holding the permit, tells the limit how long it
/// took and how it ended, and gives the permit back on every path; refuses with a status code and Retry-After at once.
/// </summary>
internal sealed class FanOutConcurrencyMiddleware
{
    private static readonly Action<ILogger, Exception?> s_selectorFailed = LoggerMessage.Define(
        LogLevel.Warning, new EventId(2, "PrioritySelectorFailed"), "FanOutConcurrencyOptions.PrioritySelector threw; the request gets the endpoint's or the default priority.");

    private static readonly Action<ILogger, Exception?> s_recordFailed = LoggerMessage.Define(
        LogLevel.Error, new EventId(3, "RecordFailed"), "The concurrency limit threw while a request started or ended; its permit is given back.");

    private readonly RequestDelegate _next;
    private readonly RequestAdmission _admission;
    private readonly ConcurrencyLimit _limit;
    private readonly ILogger _logger;
    private readonly RequestPriority _defaultPriority;
    private readonly Func<HttpContext, RequestPriority?>? _selector;
    private readonly int _rejectionStatusCode;
    private readonly string _retryAfter;
    private readonly TimeProvider _time;

    public FanOutConcurrencyMiddleware(
        RequestDelegate next,
        RequestAdmission admission,
        IOptions<FanOutConcurrencyOptions> options,
        ILogger<FanOutConcurrencyMiddleware> logger,
        IServiceProvider services)
    {
        _next = next;
        _admission = admission;
        _limit = admission.Limit;
        _logger = logger;
        var value = options.Value;
        _defaultPriority = value.DefaultPriority;
        _selector = value.PrioritySelector;
        _rejectionStatusCode = value.RejectionStatusCode;
        _retryAfter = ((long)Math.Ceiling(value.RetryAfter.TotalSeconds)).ToString(CultureInfo.InvariantCulture);
        _time = value.TimeProvider;

        // Built with the pipeline, at startup: an endpoint with an unknown priority stops the host here, not at its first request.
        if (services.GetService(typeof(EndpointDataSource)) is EndpointDataSource endpoints)
        {
            CheckPriorities(endpoints);
        }
    }

    public async Task InvokeAsync(HttpContext context)
    {
        var endpoint = context.GetEndpoint();
        if (endpoint?.Metadata.GetMetadata<IDisableFanOutConcurrencyMetadata>() is not null)
        {
            await _next(context).ConfigureAwait(false);
            return;
        }

        var status = await _admission.AdmitAsync(PriorityOf(context, endpoint), context.RequestAborted).ConfigureAwait(false);
        switch (status)
        {
            case AdmissionStatus.Admitted:
                await RunHoldingPermitAsync(context).ConfigureAwait(false);
                return;
            case AdmissionStatus.AdmittedWithoutPermit:
                await _next(context).ConfigureAwait(false);
                return;
            case AdmissionStatus.Refused:
                context.Response.StatusCode = _rejectionStatusCode;
                context.Response.Headers.RetryAfter = _retryAfter;
                return;
            default:
                return; // canceled: the client is gone, nobody reads an answer
        }
    }

    /// <summary>How an admitted request ended, for the limit: a client that went away says nothing about the service's load.</summary>
    /// <remarks>
    /// 503 and 504 from the app (a dependency that refused or timed out) and a <see cref="TimeoutException"/> are overloads:
    /// an adaptive limit backs off. Other 5xx and other exceptions are failures (a bug is not load). A 429 from the app is a
    /// client's own rate limit, not the service's load: a success.
    /// </remarks>
    internal static ItemOutcome Classify(HttpContext context, Exception? exception)
    {
        if (context.RequestAborted.IsCancellationRequested)
        {
            return ItemOutcome.Canceled;
        }

        if (exception is not null)
        {
            for (var e = exception; e is not null; e = e.InnerException)
            {
                if (e is TimeoutException)
                {
                    return ItemOutcome.Overloaded;
                }
            }

            return ItemOutcome.Failed;
        }

        return context.Response.StatusCode switch
        {
            StatusCodes.Status503ServiceUnavailable or StatusCodes.Status504GatewayTimeout => ItemOutcome.Overloaded,
            >= 500 => ItemOutcome.Failed,
            _ => ItemOutcome.Succeeded,
        };
    }

    /// <summary>Runs the rest of the pipeline; the permit goes back in the one finally, whatever happened, with the time a success took.</summary>
    private async Task RunHoldingPermitAsync(HttpContext context)
    {
        var admitted = _time.GetTimestamp();
        var outcome = ItemOutcome.Failed;
        var started = false;
        long start = 0;
        Exception? failure = null;
        try
        {
            start = _limit.RecordStart();
            started = true;
            await _next(context).ConfigureAwait(false);
        }
        catch (Exception exception)
        {
            failure = exception;
            throw;
        }
        finally
        {
            try
            {
                outcome = Classify(context, failure);
                if (started)
                {
                    _limit.RecordCompletion(start, outcome);
                }
            }
            catch (Exception exception)
            {
                s_recordFailed(_logger, exception);
            }
            finally
            {
                _admission.Release(outcome == ItemOutcome.Succeeded ? _time.GetElapsedTime(admitted) : null);
            }
        }
    }

    private RequestPriority PriorityOf(HttpContext context, Endpoint? endpoint)
    {
        var byEndpoint = endpoint?.Metadata.GetMetadata<IRequestPriorityMetadata>()?.Priority;
        var fallback = byEndpoint is { } p && Enum.IsDefined(p) ? p : _defaultPriority;
        if (_selector is null)
        {
            return fallback;
        }

        try
        {
            return _selector(context) is { } chosen && Enum.IsDefined(chosen) ? chosen : fallback;
        }
        catch (Exception exception)
        {
            s_selectorFailed(_logger, exception);
            return fallback;
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
