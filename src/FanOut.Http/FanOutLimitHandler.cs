using System.Net;

namespace FanOut.Http;

/// <summary>
/// A <see cref="DelegatingHandler"/> that sends each request under a permit of its destination's <see cref="ConcurrencyLimit"/>,
/// tells the limit how the request went, and re-sends a request the server did not process (429, 503) once its Retry-After
/// has passed.
/// </summary>
/// <remarks>
/// <para>
/// The permit is held while the request is in flight: from the send until the response's headers arrive (or the send
/// fails). It is given back before a Retry-After is waited out, and before the caller reads the body.
/// </para>
/// <para>
/// Outcomes: 429 and 503 are overloads (an adaptive limit backs off); a timeout (<see cref="TimeoutException"/>, a
/// canceled request whose inner exception is one, or <see cref="FanOutHttpOptions.AttemptTimeout"/>) is an overload too,
/// but never re-sent (the server may have done the work); any other 5xx or exception is a failure; a cancellation by the
/// caller says nothing about the server.
/// </para>
/// <para>
/// Re-sends: only after a 429 or 503, only for an idempotent method (GET, HEAD, OPTIONS, PUT, DELETE, TRACE) unless
/// <see cref="FanOutHttpOptions.ResendNonIdempotent"/>, at most <see cref="FanOutHttpOptions.MaxResends"/> times, after the
/// response's Retry-After (or a short jittered back-off when it gives none) if that is at most
/// <see cref="FanOutHttpOptions.MaxRetryAfter"/>; otherwise the 429 or 503 is returned as it came. A request that may be
/// re-sent has its content buffered first (<see cref="HttpContent.LoadIntoBufferAsync()"/>), so that it can be sent again.
/// Waits use the limit's <see cref="ConcurrencyLimit.TimeProvider"/>.
/// </para>
/// </remarks>
public sealed class FanOutLimitHandler : DelegatingHandler
{
    /// <summary>The first back-off's ceiling when a 429 or 503 gives no Retry-After (FanOut's own base delay).</summary>
    private static readonly TimeSpan s_baseDelay = TimeSpan.FromMilliseconds(5);

    /// <summary>No back-off without a hint is longer than this (FanOut's own).</summary>
    private static readonly TimeSpan s_maxDelay = TimeSpan.FromSeconds(1);

    private readonly HostConcurrencyLimits _limits;

    /// <summary>A handler over <paramref name="limits"/> (share one instance between handlers that should share budgets).</summary>
    /// <param name="limits">The per-destination limits.</param>
    public FanOutLimitHandler(HostConcurrencyLimits limits)
    {
        ArgumentNullException.ThrowIfNull(limits);
        _limits = limits;
    }

    /// <summary>The per-destination limits this handler takes permits from.</summary>
    public HostConcurrencyLimits Limits => _limits;

    /// <summary>Sends <paramref name="request"/> under a permit of its destination's limit; see the class remarks.</summary>
    /// <param name="request">The request; its URI must be absolute.</param>
    /// <param name="cancellationToken">Cancels the wait for a permit, a Retry-After wait and the send.</param>
    /// <returns>The response; a 429 or 503 only when it may not or need not be re-sent.</returns>
    protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(request);
        var entry = _limits.GetEntry(request.RequestUri ?? throw new ArgumentException("The request has no URI.", nameof(request)));
        var options = _limits.Options;
        var mayResend = options.MaxResends > 0 && (IsIdempotent(request.Method) || options.ResendNonIdempotent);
        if (mayResend && request.Content is { } content)
        {
            await content.LoadIntoBufferAsync().ConfigureAwait(false);
        }

        var time = entry.Limit.TimeProvider;
        for (var resends = 0; ; resends++)
        {
            HttpResponseMessage response;
            using (var lease = (ConcurrencyLease)await entry.Leases.AcquireAsync(1, cancellationToken).ConfigureAwait(false))
            {
                response = await SendUnderLeaseAsync(request, lease, time, options.AttemptTimeout, cancellationToken).ConfigureAwait(false);
                if (!IsOverload(response.StatusCode))
                {
                    if ((int)response.StatusCode >= 500)
                    {
                        lease.MarkFailed();
                    }

                    return response;
                }

                // With its Retry-After: an adaptive limit then grants no permit to this host until the pause has passed.
                if (RetryAfterOf(response, time) is { } retryAfter)
                {
                    lease.MarkOverloaded(retryAfter);
                }
                else
                {
                    lease.MarkOverloaded();
                }
            }

            // The permit is back: the wait below holds none.
            if (!mayResend || resends >= options.MaxResends || DelayBeforeResend(response, resends + 1, time) is not { } delay || delay > options.MaxRetryAfter)
            {
                return response;
            }

            // One layer re-runs, never two: inside a FanOut call that runs the item again after this overload (its body throws
            // on the 429 as HttpClient's GetStringAsync does), the handler leaves the re-run to it. One item is then sent at
            // most 1 + OverloadRetries times, or 1 + MaxResends where the call does not re-run, never their product (81).
            if (FanOutItem.IsRunning && FanOutItem.WillRerun(new HttpRequestException($"Response status code does not indicate success: {(int)response.StatusCode} ({response.ReasonPhrase}).", null, response.StatusCode)))
            {
                return response;
            }

            response.Dispose();
            if (delay > TimeSpan.Zero)
            {
                await Task.Delay(delay, time, cancellationToken).ConfigureAwait(false);
            }
        }
    }

    private async Task<HttpResponseMessage> SendUnderLeaseAsync(HttpRequestMessage request, ConcurrencyLease lease, TimeProvider time, TimeSpan? attemptTimeout, CancellationToken cancellationToken)
    {
        if (attemptTimeout is not { } timeout)
        {
            try
            {
                return await base.SendAsync(request, cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e)
            {
                lease.Outcome = Judge(e, cancellationToken);
                throw;
            }
        }

        using var timer = new CancellationTokenSource(timeout, time);
        using var linked = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, timer.Token);
        try
        {
            return await base.SendAsync(request, linked.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException e) when (timer.IsCancellationRequested && !cancellationToken.IsCancellationRequested)
        {
            lease.MarkOverloaded();

            // As HttpClient reports its own timeout: a canceled request whose inner exception is a TimeoutException.
            throw new TaskCanceledException($"The request to {request.RequestUri} was canceled after the handler's AttemptTimeout of {timeout.TotalSeconds:0.###} s.", new TimeoutException(e.Message, e));
        }
        catch (Exception e)
        {
            lease.Outcome = Judge(e, cancellationToken);
            throw;
        }
    }

    /// <summary>How a failed send ended, for the limit: a timeout is an overload, a caller's cancellation says nothing.</summary>
    private static ItemOutcome Judge(Exception failure, CancellationToken cancellationToken) => failure switch
    {
        TimeoutException or OperationCanceledException { InnerException: TimeoutException } => ItemOutcome.Overloaded,
        OperationCanceledException when cancellationToken.IsCancellationRequested => ItemOutcome.Canceled,
        HttpRequestException { StatusCode: HttpStatusCode.TooManyRequests or HttpStatusCode.ServiceUnavailable } => ItemOutcome.Overloaded,
        _ => ItemOutcome.Failed,
    };

    private static bool IsOverload(HttpStatusCode status) => status is HttpStatusCode.TooManyRequests or HttpStatusCode.ServiceUnavailable;

    /// <summary>GET, HEAD, OPTIONS, PUT, DELETE and TRACE (RFC 9110, 9.2.2).</summary>
    private static bool IsIdempotent(HttpMethod method) =>
        method == HttpMethod.Get || method == HttpMethod.Head || method == HttpMethod.Options ||
        method == HttpMethod.Put || method == HttpMethod.Delete || method == HttpMethod.Trace;

    /// <summary>The response's Retry-After (delta-seconds or a date, never negative), or null when it has none.</summary>
    private static TimeSpan? RetryAfterOf(HttpResponseMessage response, TimeProvider time) => response.Headers.RetryAfter switch
    {
        { Delta: { } delta } => delta < TimeSpan.Zero ? TimeSpan.Zero : delta,
        { Date: { } date } when date - time.GetUtcNow() is var wait => wait < TimeSpan.Zero ? TimeSpan.Zero : wait,
        _ => null,
    };

    /// <summary>The response's Retry-After (delta-seconds or a date), or a jittered exponential back-off when it has none.</summary>
    private static TimeSpan? DelayBeforeResend(HttpResponseMessage response, int attempt, TimeProvider time)
    {
        if (RetryAfterOf(response, time) is { } retryAfter)
        {
            return retryAfter;
        }

        // Full jitter up to min(1 s, 5 ms x 2^(attempt-1)), as FanOut's loops back off when the downstream gives no hint.
        var ceiling = Math.Min(s_maxDelay.TotalMilliseconds, s_baseDelay.TotalMilliseconds * Math.Pow(2, attempt - 1));
        return TimeSpan.FromMilliseconds(Random.Shared.NextDouble() * ceiling);
    }
}
