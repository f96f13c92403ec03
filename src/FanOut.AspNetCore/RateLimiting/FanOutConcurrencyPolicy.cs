using System.Threading.RateLimiting;

using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.RateLimiting;

namespace FanOut.AspNetCore;

/// <summary>
/// The named policy <c>AddFanOutConcurrencyPolicy()</c> registers: one partition per priority, each a view of the one
/// <see cref="FanOutConcurrencyLimiter"/> (the same queue, reserve and limit), so every endpoint under the policy shares one budget.
/// </summary>
/// <remarks>
/// A policy's partition is a plain <see cref="RateLimiter"/>, which is not handed the request; the view finds it through
/// <see cref="IHttpContextAccessor"/> (registered by <c>AddFanOutConcurrency()</c>), on the request's own flow, so its lease
/// can read the response's outcome when ASP.NET Core's rate limiting disposes it after the endpoint.
/// </remarks>
internal sealed class FanOutConcurrencyPolicy : IRateLimiterPolicy<RequestPriority>
{
    private static readonly Func<OnRejectedContext, CancellationToken, ValueTask> s_onRejected = FanOutConcurrencyLimiter.OnRejectedAsync;

    private readonly FanOutConcurrencyLimiter _limiter;
    private readonly Func<RequestPriority, RateLimiter> _factory;

    public FanOutConcurrencyPolicy(FanOutConcurrencyLimiter limiter, IHttpContextAccessor accessor)
    {
        _limiter = limiter;
        var views = Enum.GetValues<RequestPriority>().ToDictionary(p => p, p => (RateLimiter)new PriorityView(limiter, accessor, p));
        _factory = p => views[p];
    }

    public Func<OnRejectedContext, CancellationToken, ValueTask>? OnRejected => s_onRejected;

    public RateLimitPartition<RequestPriority> GetPartition(HttpContext httpContext) => new(_limiter.GetPriority(httpContext), _factory);

    /// <summary>The limiter seen by the requests of one priority.</summary>
    private sealed class PriorityView(FanOutConcurrencyLimiter limiter, IHttpContextAccessor accessor, RequestPriority priority) : RateLimiter
    {
        /// <summary>Never idle: ASP.NET Core's partitioned limiter disposes idle partitions, and this one holds nothing of its own.</summary>
        public override TimeSpan? IdleDuration => null;

        public override RateLimiterStatistics? GetStatistics() => limiter.Statistics();

        protected override RateLimitLease AttemptAcquireCore(int permitCount)
        {
            var context = accessor.HttpContext;
            return limiter.AttemptAcquire(context, PriorityOrExempt(context, permitCount), permitCount, marksExceptions: false);
        }

        protected override ValueTask<RateLimitLease> AcquireAsyncCore(int permitCount, CancellationToken cancellationToken)
        {
            var context = accessor.HttpContext;
            return limiter.AcquireAsync(context, PriorityOrExempt(context, permitCount), permitCount, marksExceptions: false, cancellationToken);
        }

        private RequestPriority? PriorityOrExempt(HttpContext? context, int permitCount)
        {
            ArgumentOutOfRangeException.ThrowIfGreaterThan(permitCount, 1); // a request holds one permit
            return context?.GetEndpoint()?.Metadata.GetMetadata<IDisableFanOutConcurrencyMetadata>() is null ? priority : null;
        }
    }
}

/// <summary>
/// The global limiter <c>UseFanOutConcurrencyAsGlobalLimiter()</c> sets: the request's own services'
/// <see cref="FanOutConcurrencyLimiter"/>, found per request because <c>RateLimiterOptions</c> are built without the services.
/// </summary>
internal sealed class FanOutGlobalLimiter : PartitionedRateLimiter<HttpContext>
{
    public override RateLimiterStatistics? GetStatistics(HttpContext resource) => Resolve(resource).GetStatistics(resource);

    protected override RateLimitLease AttemptAcquireCore(HttpContext resource, int permitCount) => Resolve(resource).AttemptAcquire(resource, permitCount);

    protected override ValueTask<RateLimitLease> AcquireAsyncCore(HttpContext resource, int permitCount, CancellationToken cancellationToken) =>
        Resolve(resource).AcquireAsync(resource, permitCount, cancellationToken);

    private static FanOutConcurrencyLimiter Resolve(HttpContext resource)
    {
        ArgumentNullException.ThrowIfNull(resource);
        return resource.RequestServices?.GetService(typeof(FanOutConcurrencyLimiter)) as FanOutConcurrencyLimiter
            ?? throw new InvalidOperationException("UseFanOutConcurrencyAsGlobalLimiter needs services.AddFanOutConcurrency() first.");
    }
}
