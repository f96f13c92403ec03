using System.Net;

using FanOut.Http.Tests.Handlers;

using Microsoft.Extensions.Time.Testing;

namespace FanOut.AspNetCore.Tests.Middleware;

/// <summary>Admission, the queue's bound and timeout, refusals with Retry-After, exempt endpoints, disconnects.</summary>
public sealed class AdmissionTests
{
    [Fact]
    public async Task Request_NoPermitAndNoQueue_RefusedAtOnceWith503AndRetryAfter()
    {
        var limit = ConcurrencyLimit.Fixed(1);
        await using var app = await TestApp.StartAsync(o => { o.Limit = limit; o.QueueLimit = 0; });

        var first = await app.SendAdmittedAsync("/work?id=a");
        using var refused = await app.Client.GetAsync("/work?id=b");

        Assert.Equal(HttpStatusCode.ServiceUnavailable, refused.StatusCode);
        Assert.Equal(TimeSpan.FromSeconds(1), refused.Headers.RetryAfter?.Delta);
        app.Gate.OpenAll();
        using var admitted = await first;
        Assert.Equal(HttpStatusCode.OK, admitted.StatusCode);
        Assert.Equal(["a"], app.Gate.Order);
        await Wait.UntilAsync(() => limit.InFlight == 0, "the admitted request's permit went back");
    }

    [Fact]
    public async Task Request_RejectionStatusCode429_RefusedWith429AndRetryAfterRoundedUp()
    {
        var limit = ConcurrencyLimit.Fixed(1);
        await using var app = await TestApp.StartAsync(o =>
        {
            o.Limit = limit;
            o.QueueLimit = 0;
            o.RejectionStatusCode = 429;
            o.RetryAfter = TimeSpan.FromSeconds(1.5);
        });

        var first = await app.SendAdmittedAsync("/work?id=a");
        using var refused = await app.Client.GetAsync("/work?id=b");

        Assert.Equal(HttpStatusCode.TooManyRequests, refused.StatusCode);
        Assert.Equal(TimeSpan.FromSeconds(2), refused.Headers.RetryAfter?.Delta);
        app.Gate.OpenAll();
        (await first).Dispose();
    }

    [Fact]
    public async Task Queue_Full_RefusesBeyondItsBoundAndServesTheQueuedInOrder()
    {
        var limit = ConcurrencyLimit.Fixed(1);
        // Room for 2 (QueuePerPermit 2 x limit 1); RejectionStart 1: no random refusals below a full queue.
        await using var app = await TestApp.StartAsync(o => { o.Limit = limit; o.QueuePerPermit = 2; o.RejectionStart = 1; });

        var a = await app.SendAdmittedAsync("/work?id=a");
        var b = await app.SendQueuedAsync("/work?id=b", queued: 1);
        var c = await app.SendQueuedAsync("/work?id=c", queued: 2);
        using var d = await app.Client.GetAsync("/work?id=d");

        Assert.Equal(HttpStatusCode.ServiceUnavailable, d.StatusCode);
        Assert.NotNull(d.Headers.RetryAfter);
        Assert.Equal(["a"], app.Gate.Order);
        await app.OpenAndAssertAllOkAsync(a, b, c);

        Assert.Equal(["a", "b", "c"], app.Gate.Order);
        await Wait.UntilAsync(() => limit.InFlight == 0, "every permit went back");
    }

    [Fact]
    public async Task Queue_WaitLongerThanQueueTimeout_Refused()
    {
        var time = new CountingTimeProvider(); // b's queue timeout is armed a moment after b counts as queued: wait for it
        var limit = ConcurrencyLimit.Fixed(1);
        await using var app = await TestApp.StartAsync(o => { o.Limit = limit; o.TimeProvider = time; o.QueueTimeout = TimeSpan.FromSeconds(2); });

        var a = await app.SendAdmittedAsync("/work?id=a");
        var timers = time.TimersCreated;
        var b = await app.SendQueuedAsync("/work?id=b", queued: 1);
        await time.WaitForTimersAsync(timers + 1);
        time.Advance(TimeSpan.FromSeconds(1.9));
        Assert.False(b.IsCompleted);
        time.Advance(TimeSpan.FromSeconds(0.1));
        using var timedOut = await b;

        Assert.Equal(HttpStatusCode.ServiceUnavailable, timedOut.StatusCode);
        Assert.NotNull(timedOut.Headers.RetryAfter);
        Assert.Equal(0, app.Admission.Queued);
        app.Gate.OpenAll();
        (await a).Dispose();
        Assert.Equal(["a"], app.Gate.Order);
    }

    [Fact]
    public async Task HealthCheck_Disabled_AnswersWhileTheLimitIsFull()
    {
        var limit = ConcurrencyLimit.Fixed(1);
        await using var app = await TestApp.StartAsync(o => { o.Limit = limit; o.QueueLimit = 0; });

        var a = await app.SendAdmittedAsync("/work?id=a");
        using var work = await app.Client.GetAsync("/work?id=b");
        using var health = await app.Client.GetAsync("/healthz");

        Assert.Equal(HttpStatusCode.ServiceUnavailable, work.StatusCode);
        Assert.Equal(HttpStatusCode.OK, health.StatusCode);
        Assert.Equal(1, limit.InFlight);
        app.Gate.OpenAll();
        (await a).Dispose();
    }

    [Fact]
    public async Task Disconnect_WhileQueued_FreesItsPlaceAtOnce()
    {
        var limit = ConcurrencyLimit.Fixed(1);
        await using var app = await TestApp.StartAsync(o => { o.Limit = limit; o.QueuePerPermit = 1; o.RejectionStart = 1; });

        var a = await app.SendAdmittedAsync("/work?id=a");
        using var leave = new CancellationTokenSource();
        var b = await app.SendQueuedAsync("/work?id=b", queued: 1, leave.Token);
        leave.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => b);
        await Wait.UntilAsync(() => app.Admission.Queued == 0, "b's place freed");

        // The queue (room for 1) takes c: had b's place stayed taken, c would be refused.
        var c = await app.SendQueuedAsync("/work?id=c", queued: 1); // in b's place
        app.Gate.OpenAll();
        using var served = await c;
        Assert.Equal(HttpStatusCode.OK, served.StatusCode);
        (await a).Dispose();

        Assert.Equal(["a", "c"], app.Gate.Order);
        Assert.Equal(1, app.Admission.Counts.Canceled);
        await Wait.UntilAsync(() => limit.InFlight == 0, "no permit went to the departed request");
    }

    [Fact]
    public async Task Handler_Throws_PermitGoesBack()
    {
        var limit = ConcurrencyLimit.Fixed(1);
        await using var app = await TestApp.StartAsync(o => { o.Limit = limit; o.QueueLimit = 0; });

        using var failed = await app.Client.GetAsync("/throw");
        await Wait.UntilAsync(() => limit.InFlight == 0, "the permit went back after the exception");
        using var next = await app.Client.GetAsync("/status/200");

        Assert.Equal(HttpStatusCode.InternalServerError, failed.StatusCode);
        Assert.Equal(HttpStatusCode.OK, next.StatusCode);
    }
}
