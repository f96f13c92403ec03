using System.Globalization;
using System.Threading.RateLimiting;

using FanOut.AspNetCore.Admission;

using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.RateLimiting;
using Microsoft.Extensions.Logging;

namespace FanOut.AspNetCore;

/// <summary>
/// The server's admission as a <see cref="PartitionedRateLimiter{TResource}"/> of requests: each request is admitted to the
/// limit by its priority (critical, normal, sheddable), queued a little, or refused at once with
/// <see cref="MetadataName.RetryAfter"/>. Disposing an acquired lease gives the permit back, exactly once, and tells the
/// limit how the request ended (read from the <see cref="HttpContext"/> then) and, for a success, how long it took.
/// </summary>
/// <remarks>
/// <para>
/// Registered by <c>services.AddFanOutConcurrency()</c> as a singleton; <c>app.UseFanOutConcurrency()</c> uses it, and
/// ASP.NET Core's rate limiting can too: <c>options.AddFanOutConcurrencyPolicy()</c> for <c>[EnableRateLimiting]</c>, or
/// <c>options.UseFanOutConcurrencyAsGlobalLimiter()</c> for every request.
/// </para>
/// <para>
/// An acquired lease reads, when disposed: <see cref="HttpContext.RequestAborted"/> (a client that went away: canceled,
/// teaches nothing), an exception the request failed with (seen when <c>UseFanOutConcurrency</c> runs the request), else
/// the response's status code (503 and 504: overloaded; another 5xx: failed; anything else, a 429 included: succeeded).
/// Dispose it once the response is decided: after the rest of the pipeline, as both middlewares do. ASP.NET Core's rate
/// limiting disposes it while an exception unwinds too, before any status was set for it: a lease of this limiter's own
/// <c>AcquireAsync</c> whose response has not started, with no error status, gives its permit back at once and tells the
/// limit the outcome once the response was sent (<see cref="HttpResponse.OnCompleted(Func{object, Task}, object)"/>).
/// </para>
/// <para>
/// Each lease has one owner, who disposes it: a second <c>Dispose</c> does nothing, and a lease never disposed keeps its permit.
/// </para>
/// </remarks>
public sealed class FanOutConcurrencyLimiter : PartitionedRateLimiter<HttpContext>
{
    /// <summary>The policy name <c>AddFanOutConcurrencyPolicy()</c> registers by default: <c>[EnableRateLimiting(FanOutConcurrencyLimiter.PolicyName)]</c>.</summary>
    public const string PolicyName = "FanOutConcurrency";

    private static readonly Action<ILogger, Exception?> s_selectorFailed = LoggerMessage.Define(
        LogLevel.Warning, new EventId(2, "PrioritySelectorFailed"), "FanOutConcurrencyOptions.PrioritySelector threw; the request gets the endpoint's or the default priority.");

    private static readonly Action<ILogger, Exception?> s_recordFailed = LoggerMessage.Define(
        LogLevel.Error, new EventId(3, "RecordFailed"), "The concurrency limit threw while a request started or ended; its permit is given back.");

    private static readonly Action<ILogger, double, double, Exception?> s_poolLagging = LoggerMessage.Define<double, double>(
        LogLevel.Warning, new EventId(4, "ThreadPoolLagging"), "The thread pool lags {LagMs:0} ms, more than a request's median service of {ServiceMs:0.0} ms: requests queue in front of the admission, so successes reach the limit as overloads until it keeps up.");

    private static readonly Action<ILogger, Exception?> s_poolKeepsUp = LoggerMessage.Define(
        LogLevel.Information, new EventId(5, "ThreadPoolKeepsUp"), "The thread pool keeps up again: successes reach the limit as successes.");

    /// <summary>The least time between two warnings that the pool lags.</summary>
    private static readonly TimeSpan LagLogSpacing = TimeSpan.FromSeconds(10);

    private readonly RequestAdmission _admission;
    private readonly ConcurrencyLimit _limit;
    private readonly ILogger _logger;
    private readonly RequestPriority _defaultPriority;
    private readonly Func<HttpContext, RequestPriority?>? _selector;
    private readonly TimeProvider _time;
    private readonly RefusedLease _refused;

    /// <summary>1 while successes reach the limit as overloads because the pool lags.</summary>
    private int _lagging;

    /// <summary>When the last warning that the pool lags was logged, in timestamp ticks (0: never).</summary>
    private long _lagLoggedAt;

    /// <summary>1 while a warning was logged for this lag and its "keeps up" is owed.</summary>
    private int _lagTold;

    internal FanOutConcurrencyLimiter(RequestAdmission admission, FanOutConcurrencyOptions options, ILogger logger)
    {
        _admission = admission;
        _limit = admission.Limit;
        _logger = logger;
        _defaultPriority = options.DefaultPriority;
        _selector = options.PrioritySelector;
        _time = options.TimeProvider;
        RejectionStatusCode = options.RejectionStatusCode;
        RetryAfter = TimeSpan.FromSeconds(Math.Ceiling(options.RetryAfter.TotalSeconds));
        _refused = new RefusedLease(RetryAfter, RejectionStatusCode);
    }

    /// <summary>The limit requests are admitted to (<see cref="FanOutConcurrencyOptions.Limit"/>, or the default adaptive one).</summary>
    public ConcurrencyLimit Limit => _limit;

    /// <summary>The status code a refusal is answered with (<see cref="FanOutConcurrencyOptions.RejectionStatusCode"/>).</summary>
    public int RejectionStatusCode { get; }

    /// <summary>The Retry-After a refused lease carries (<see cref="MetadataName.RetryAfter"/>), in whole seconds.</summary>
    public TimeSpan RetryAfter { get; }

    internal RequestAdmission Admission => _admission;

    /// <summary>The priority of <paramref name="context"/>'s request: <see cref="FanOutConcurrencyOptions.PrioritySelector"/>, else the endpoint's metadata, else <see cref="FanOutConcurrencyOptions.DefaultPriority"/>.</summary>
    /// <param name="context">The request.</param>
    /// <returns>A defined <see cref="RequestPriority"/>.</returns>
    public RequestPriority GetPriority(HttpContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        var byEndpoint = context.GetEndpoint()?.Metadata.GetMetadata<IRequestPriorityMetadata>()?.Priority;
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

    /// <inheritdoc/>
    public override RateLimiterStatistics? GetStatistics(HttpContext resource) => Statistics();

    /// <summary>The statistics of the whole limiter: every priority shares one limit and queue.</summary>
    internal RateLimiterStatistics Statistics()
    {
        var (atOnce, fromQueue, refused, _) = _admission.Counts;
        return new RateLimiterStatistics
        {
            CurrentAvailablePermits = Math.Max(0, _limit.Current - _limit.InFlight),
            CurrentQueuedCount = _admission.Queued,
            TotalSuccessfulLeases = atOnce + fromQueue,
            TotalFailedLeases = refused,
        };
    }

    /// <inheritdoc/>
    /// <remarks>Never waits: a request that would have to queue gets a refused lease (ASP.NET Core's rate limiting then calls <c>AcquireAsync</c>, which queues it).</remarks>
    protected override RateLimitLease AttemptAcquireCore(HttpContext resource, int permitCount) =>
        AttemptAcquire(resource, PriorityOrExempt(resource, permitCount), permitCount, marksExceptions: false);

    /// <inheritdoc/>
    /// <remarks>Throws <see cref="OperationCanceledException"/> when <paramref name="cancellationToken"/> ends the wait (the client went away).</remarks>
    protected override ValueTask<RateLimitLease> AcquireAsyncCore(HttpContext resource, int permitCount, CancellationToken cancellationToken) =>
        AcquireAsync(resource, PriorityOrExempt(resource, permitCount), permitCount, marksExceptions: false, cancellationToken);

    /// <summary>The lease of <c>UseFanOutConcurrency</c>, which marks an exception the request throws (<see cref="MarkFailed"/>): its lease reads the outcome at dispose, always.</summary>
    internal ValueTask<RateLimitLease> AcquireMarkingExceptionsAsync(HttpContext context, CancellationToken cancellationToken) =>
        AcquireAsync(context, PriorityOrExempt(context, 1), 1, marksExceptions: true, cancellationToken);

    /// <summary>The request's priority, or null when it skips the limit (an exempt endpoint, or no permit asked for).</summary>
    private RequestPriority? PriorityOrExempt(HttpContext resource, int permitCount)
    {
        ArgumentNullException.ThrowIfNull(resource);
        ArgumentOutOfRangeException.ThrowIfNegative(permitCount);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(permitCount, 1); // a request holds one permit
        return permitCount == 0 || resource.GetEndpoint()?.Metadata.GetMetadata<IDisableFanOutConcurrencyMetadata>() is not null
            ? null
            : GetPriority(resource);
    }

    /// <summary>The fast path for a request of <paramref name="priority"/> (null: exempt): never waits.</summary>
    internal RateLimitLease AttemptAcquire(HttpContext? context, RequestPriority? priority, int permitCount, bool marksExceptions)
    {
        if (priority is not { } p || permitCount == 0)
        {
            return NoPermitLease.Instance;
        }

        return _admission.TryAdmit(p) is { } status ? LeaseFor(status, context, marksExceptions, default) : _refused;
    }

    /// <summary>Admits, queues or refuses a request of <paramref name="priority"/> (null: exempt).</summary>
    internal ValueTask<RateLimitLease> AcquireAsync(HttpContext? context, RequestPriority? priority, int permitCount, bool marksExceptions, CancellationToken cancellationToken)
    {
        if (priority is not { } p || permitCount == 0)
        {
            return new ValueTask<RateLimitLease>(NoPermitLease.Instance);
        }

        var admission = _admission.AdmitAsync(p, cancellationToken);
        return admission.IsCompletedSuccessfully
            ? new ValueTask<RateLimitLease>(LeaseFor(admission.Result, context, marksExceptions, cancellationToken))
            : AwaitLeaseAsync(admission, context, marksExceptions, cancellationToken);
    }

    private async ValueTask<RateLimitLease> AwaitLeaseAsync(ValueTask<AdmissionStatus> admission, HttpContext? context, bool marksExceptions, CancellationToken cancellationToken) =>
        LeaseFor(await admission.ConfigureAwait(false), context, marksExceptions, cancellationToken);

    private RateLimitLease LeaseFor(AdmissionStatus status, HttpContext? context, bool marksExceptions, CancellationToken cancellationToken)
    {
        switch (status)
        {
            case AdmissionStatus.Admitted:
                return Granted(context, marksExceptions);
            case AdmissionStatus.AdmittedWithoutPermit:
                return NoPermitLease.Instance;
            case AdmissionStatus.Refused:
                return _refused;
            default:
                // Canceled: the client went away while it waited; the RateLimiter contract for a wait ended by its token.
                throw new OperationCanceledException("The request was canceled while it waited for a permit.", cancellationToken);
        }
    }

    /// <summary>The lease of a request admitted with a permit: the limit hears it started (user code, outside every lock).</summary>
    private FanOutConcurrencyLease Granted(HttpContext? context, bool marksExceptions)
    {
        var admitted = _time.GetTimestamp();
        long? start = null;
        try
        {
            start = _limit.RecordStart();
        }
        catch (Exception exception)
        {
            s_recordFailed(_logger, exception);
        }

        return new FanOutConcurrencyLease(this, context, admitted, start, marksExceptions);
    }

    /// <summary>Gives an admitted request's permit back, once (its lease's Dispose): tells the limit how it ended, then releases the permit whatever the limit threw.</summary>
    /// <remarks>
    /// A lease of ASP.NET Core's rate limiting (<paramref name="marksExceptions"/> false) is disposed while an exception the
    /// endpoint threw unwinds, before anything sets a status for it: a response not started yet, with no error status,
    /// may be that. Its permit goes back now, and the limit hears the outcome when the response has been sent
    /// (<see cref="HttpResponse.OnCompleted(Func{object, Task}, object)"/>), from the status the client got (an unhandled
    /// exception is a 500 by then).
    /// </remarks>
    internal void GiveBack(HttpContext? context, long admitted, long? start, bool marksExceptions)
    {
        var outcome = ItemOutcome.Failed;
        var deferred = false;
        try
        {
            // Inside the try: a context read after its request ended throws, and the permit must still go back below.
            if (!marksExceptions && context is not null && !context.Response.HasStarted && context.Response.StatusCode < 500
                && !context.RequestAborted.IsCancellationRequested)
            {
                var served = _time.GetElapsedTime(admitted);
                context.Response.OnCompleted(
                    static state =>
                    {
                        var (limiter, context, start, served) = ((FanOutConcurrencyLimiter, HttpContext, long?, TimeSpan))state;
                        limiter.RecordOutcome(context, start, served);
                        return Task.CompletedTask;
                    },
                    (this, context, start, served));
                deferred = true;
                return;
            }

            outcome = Classify(context);
            if (start is { } started)
            {
                _limit.RecordCompletion(started, ForTheLimit(outcome));
            }
        }
        catch (Exception exception)
        {
            s_recordFailed(_logger, exception);
        }
        finally
        {
            _admission.Release(!deferred && outcome == ItemOutcome.Succeeded ? _time.GetElapsedTime(admitted) : null);
        }
    }

    /// <summary>Tells the limit how a request whose permit went back ended, once its response was sent; a success teaches the service time.</summary>
    private void RecordOutcome(HttpContext context, long? start, TimeSpan served)
    {
        try
        {
            var outcome = Classify(context);
            if (start is { } started)
            {
                _limit.RecordCompletion(started, ForTheLimit(outcome));
            }

            if (outcome == ItemOutcome.Succeeded)
            {
                _admission.AddServiceTime(served);
            }
        }
        catch (Exception exception)
        {
            s_recordFailed(_logger, exception);
        }
    }

    /// <summary>
    /// A success while the thread pool lags more than a request's service, with more requests running than the machine has
    /// cores, is an overload for the limit: requests wait in front of the admission, and only requests beyond the cores can
    /// be what holds the pool's threads (fewer than that would leave the cores idle, whoever else lags the pool).
    /// </summary>
    private ItemOutcome ForTheLimit(ItemOutcome outcome)
    {
        if (outcome != ItemOutcome.Succeeded || _limit.InFlight <= Environment.ProcessorCount)
        {
            return outcome;
        }

        var lag = _admission.PoolLagBeyondService;
        var lagging = lag is not null;
        if (Interlocked.Exchange(ref _lagging, lagging ? 1 : 0) != (lagging ? 1 : 0))
        {
            // Logged when it changes, and a lag that comes and goes is told once per LagLogSpacing.
            var now = _time.GetTimestamp();
            var last = Interlocked.Read(ref _lagLoggedAt);
            if (lagging && (last == 0 || _time.GetElapsedTime(last, now) >= LagLogSpacing) && Interlocked.CompareExchange(ref _lagLoggedAt, now, last) == last)
            {
                s_poolLagging(_logger, lag!.Value.TotalMilliseconds, _admission.ServiceTime.GetValueOrDefault().TotalMilliseconds, null);
                Volatile.Write(ref _lagTold, 1);
            }
            else if (!lagging && Interlocked.Exchange(ref _lagTold, 0) == 1)
            {
                s_poolKeepsUp(_logger, null);
            }
        }

        return lagging ? ItemOutcome.Overloaded : outcome;
    }

    /// <summary>How an admitted request ended, for the limit: a client that went away says nothing about the service's load.</summary>
    /// <remarks>
    /// 503 and 504 from the app (a dependency that refused or timed out) and a <see cref="TimeoutException"/> are overloads:
    /// an adaptive limit backs off. Other 5xx and other exceptions are failures (a bug is not load). A 429 from the app is a
    /// client's own rate limit, not the service's load: a success. No context (a lease taken outside a request): a failure,
    /// which carries no latency signal.
    /// </remarks>
    internal static ItemOutcome Classify(HttpContext? context)
    {
        if (context is null)
        {
            return ItemOutcome.Failed;
        }

        if (context.RequestAborted.IsCancellationRequested)
        {
            return ItemOutcome.Canceled;
        }

        if (context.Features.Get<RequestFailureFeature>()?.Exception is { } exception)
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

    /// <summary>Answers a refused request: <see cref="RejectionStatusCode"/> and Retry-After, as <c>UseFanOutConcurrency</c> does.</summary>
    /// <remarks>The <c>OnRejected</c> of the policy and of the global limiter: a lease refused by another limiter keeps its status code and gets the Retry-After it carries, if any.</remarks>
    internal static ValueTask OnRejectedAsync(OnRejectedContext context, CancellationToken cancellationToken)
    {
        if (context.Lease is RefusedLease refused)
        {
            context.HttpContext.Response.StatusCode = refused.StatusCode;
        }

        if (context.Lease.TryGetMetadata(MetadataName.RetryAfter, out var retryAfter))
        {
            context.HttpContext.Response.Headers.RetryAfter = ((long)Math.Ceiling(retryAfter.TotalSeconds)).ToString(CultureInfo.InvariantCulture);
        }

        return ValueTask.CompletedTask;
    }

    /// <summary>Marks <paramref name="context"/>'s request as failed with <paramref name="exception"/>, for its lease to read when disposed.</summary>
    internal static void MarkFailed(HttpContext context, Exception exception) => context.Features.Set(new RequestFailureFeature(exception));
}
