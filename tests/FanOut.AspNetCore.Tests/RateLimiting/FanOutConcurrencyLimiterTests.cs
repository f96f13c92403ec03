using System.Threading.RateLimiting;

using FanOut.AspNetCore.Admission;

using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging.Abstractions;

namespace FanOut.AspNetCore.Tests.RateLimiting;

/// <summary>The limiter's contract without a server: one owner per permit, Retry-After on refusal, no wait in AttemptAcquire.</summary>
public sealed class FanOutConcurrencyLimiterTests
{
    private static (FanOutConcurrencyLimiter Limiter, RequestAdmission Admission) Create(ConcurrencyLimit limit, Action<FanOutConcurrencyOptions>? configure = null)
    {
        var options = new FanOutConcurrencyOptions { Limit = limit, QueueLimit = 0 };
        configure?.Invoke(options);
        var admission = new RequestAdmission(options, NullLogger.Instance);
        return (new FanOutConcurrencyLimiter(admission, options, NullLogger.Instance), admission);
    }

    [Fact]
    public async Task Dispose_Twice_GivesThePermitBackOnceAndRecordsOneOutcome()
    {
        var limit = new RecordingLimit(1);
        var (limiter, admission) = Create(limit);
        using var _ = admission;
        var context = new DefaultHttpContext();

        var lease = await limiter.AcquireAsync(context);
        Assert.True(lease.IsAcquired);
        Assert.Equal(1, limit.InFlight);
        context.Response.StatusCode = 503;
        lease.Dispose();
        lease.Dispose();

        Assert.Equal(0, limit.InFlight);
        Assert.Equal(0, admission.Held);
        Assert.Equal([ItemOutcome.Overloaded], limit.Outcomes);
        using var next = await limiter.AcquireAsync(new DefaultHttpContext());
        Assert.True(next.IsAcquired); // the one permit is free again, and only one: a second release would free two
        Assert.False(limiter.AttemptAcquire(new DefaultHttpContext()).IsAcquired);
    }

    [Fact]
    public async Task AcquireAsync_NoPermitAndNoQueue_RefusedLeaseCarriesRetryAfterRoundedUp()
    {
        var limit = ConcurrencyLimit.Fixed(1);
        var (limiter, admission) = Create(limit, o => o.RetryAfter = TimeSpan.FromSeconds(2.2));
        using var _ = admission;
        using var held = await limiter.AcquireAsync(new DefaultHttpContext());

        using var refused = await limiter.AcquireAsync(new DefaultHttpContext());

        Assert.False(refused.IsAcquired);
        Assert.True(refused.TryGetMetadata(MetadataName.RetryAfter, out var retryAfter));
        Assert.Equal(TimeSpan.FromSeconds(3), retryAfter);
        Assert.Equal(1, limit.InFlight);
    }

    [Fact]
    public async Task AttemptAcquire_WouldHaveToQueue_RefusedAtOnceWithoutQueueing()
    {
        var limit = ConcurrencyLimit.Fixed(1);
        var (limiter, admission) = Create(limit, o => { o.QueueLimit = 1000; o.QueuePerPermit = 10; o.RejectionStart = 1; });
        using var _ = admission;
        using var held = limiter.AttemptAcquire(new DefaultHttpContext());
        Assert.True(held.IsAcquired);

        using var attempt = limiter.AttemptAcquire(new DefaultHttpContext());
        var waiting = limiter.AcquireAsync(new DefaultHttpContext()).AsTask();

        Assert.False(attempt.IsAcquired);
        Assert.False(waiting.IsCompleted);
        Assert.Equal(1, admission.Queued); // the wait queued, the attempt did not
        held.Dispose();
        using var granted = await waiting.WaitAsync(TimeSpan.FromSeconds(30)); // a guard against a hang, not a timing
        Assert.True(granted.IsAcquired);
    }

    [Fact]
    public async Task AcquireAsync_ClientLeavesWhileQueued_ThrowsOperationCanceledAndHoldsNothing()
    {
        var limit = ConcurrencyLimit.Fixed(1);
        var (limiter, admission) = Create(limit, o => { o.QueueLimit = 1000; o.QueuePerPermit = 10; o.RejectionStart = 1; });
        using var _ = admission;
        using var held = await limiter.AcquireAsync(new DefaultHttpContext());
        using var leave = new CancellationTokenSource();

        var waiting = limiter.AcquireAsync(new DefaultHttpContext(), 1, leave.Token).AsTask();
        leave.Cancel();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => waiting);
        Assert.Equal(0, admission.Queued);
        Assert.Equal(1, limit.InFlight);
    }

    [Theory]
    [InlineData(-1)]
    [InlineData(2)]
    public async Task AcquireAsync_PermitCountNotOneOrZero_Throws(int permitCount)
    {
        var (limiter, admission) = Create(ConcurrencyLimit.Fixed(4));
        using var _ = admission;

        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(() => limiter.AcquireAsync(new DefaultHttpContext(), permitCount).AsTask());
    }

    [Fact]
    public void GetPriority_SelectorThenEndpointThenDefault()
    {
        var (limiter, admission) = Create(ConcurrencyLimit.Fixed(4), o =>
        {
            o.DefaultPriority = RequestPriority.Sheddable;
            o.PrioritySelector = c => c.Request.Headers.ContainsKey("X-Critical") ? RequestPriority.Critical : null;
        });
        using var _ = admission;
        var plain = new DefaultHttpContext();
        var vip = new DefaultHttpContext();
        vip.Request.Headers["X-Critical"] = "1";
        var endpoint = new DefaultHttpContext();
        endpoint.SetEndpoint(new Endpoint(null, new EndpointMetadataCollection(new RequestPriorityAttribute(RequestPriority.Normal)), "normal"));

        Assert.Equal(RequestPriority.Sheddable, limiter.GetPriority(plain));
        Assert.Equal(RequestPriority.Critical, limiter.GetPriority(vip));
        Assert.Equal(RequestPriority.Normal, limiter.GetPriority(endpoint));
    }
}
