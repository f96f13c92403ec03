using System.Net;

using FanOut.AspNetCore.Tests.RealServers;

using Microsoft.AspNetCore.Builder;

namespace FanOut.AspNetCore.Tests.RateLimiting;

/// <summary>
/// The same admission on real Kestrel, registered three ways (UseFanOutConcurrency, ASP.NET Core's rate limiting as its
/// global limiter, and as a named policy): the lease gives its permit back exactly once on every path and tells the limit
/// how the request ended; a refusal is immediate with Retry-After.
/// </summary>
public sealed class RegistrationTests
{
    public static TheoryData<Registration, string, ItemOutcome, HttpStatusCode> Endings()
    {
        var data = new TheoryData<Registration, string, ItemOutcome, HttpStatusCode>();
        foreach (var registration in Enum.GetValues<Registration>())
        {
            data.Add(registration, "/status/200", ItemOutcome.Succeeded, HttpStatusCode.OK);
            data.Add(registration, "/status/429", ItemOutcome.Succeeded, HttpStatusCode.TooManyRequests);
            data.Add(registration, "/status/503", ItemOutcome.Overloaded, HttpStatusCode.ServiceUnavailable);
            data.Add(registration, "/status/500", ItemOutcome.Failed, HttpStatusCode.InternalServerError);
            data.Add(registration, "/throw", ItemOutcome.Failed, HttpStatusCode.InternalServerError);
        }

        // Only UseFanOutConcurrency sees the exception itself; ASP.NET Core's rate limiting shows the lease the 500 the client got.
        data.Add(Registration.Middleware, "/timeout", ItemOutcome.Overloaded, HttpStatusCode.InternalServerError);
        return data;
    }

    [Theory]
    [MemberData(nameof(Endings))]
    public async Task Request_Ends_PermitBackOnceAndTheLimitToldHowItEnded(Registration registration, string path, ItemOutcome expected, HttpStatusCode status)
    {
        var limit = new RecordingLimit(4);
        await using var app = await KestrelApp.StartAsync(registration, o => o.Limit = limit);

        using var response = await app.Client.GetAsync(path);

        Assert.Equal(status, response.StatusCode);
        await Wait.UntilAsync(() => limit.Outcomes.Count >= 1, "an outcome recorded");
        Assert.Equal([expected], limit.Outcomes);
        await Wait.UntilAsync(() => limit.InFlight == 0, "the permit went back");
        Assert.Equal(0, app.Admission.Held); // once: a second give-back would leave -1 here
        Assert.Equal(1, app.Admission.Counts.AdmittedAtOnce);
    }

    [Theory]
    [InlineData(Registration.Middleware, "/status/200")]
    [InlineData(Registration.GlobalLimiter, "/status/200")] // no body: the response starts after the lease is disposed
    [InlineData(Registration.NamedPolicy, "/status/200")]
    [InlineData(Registration.GlobalLimiter, "/healthz-limited")] // a body: started before it
    [InlineData(Registration.NamedPolicy, "/healthz-limited")]
    public async Task Request_Served_TeachesTheServiceTimeAndAFailureDoesNot(Registration registration, string served)
    {
        var limit = new RecordingLimit(4);
        await using var app = await KestrelApp.StartAsync(registration, o => o.Limit = limit, e => e.MapGet("/healthz-limited", () => "a body"));

        using (await app.Client.GetAsync("/throw"))
        {
            await Wait.UntilAsync(() => limit.Outcomes.Count == 1, "the failure recorded");
        }

        Assert.Null(app.Admission.ServiceTime); // a failure's time is not a service time
        using (await app.Client.GetAsync(served))
        {
            await Wait.UntilAsync(() => limit.Outcomes.Count == 2, "the success recorded");
        }

        Assert.Equal([ItemOutcome.Failed, ItemOutcome.Succeeded], limit.Outcomes);
        await Wait.UntilAsync(() => app.Admission.ServiceTime is not null, "the success taught the service time");
        Assert.Equal(0, app.Admission.Held);
    }

    [Theory]
    [InlineData(Registration.Middleware)]
    [InlineData(Registration.GlobalLimiter)]
    [InlineData(Registration.NamedPolicy)]
    public async Task Request_ClientLeavesWhileRunning_PermitBackOnceAndRecordedAsCanceled(Registration registration)
    {
        var limit = new RecordingLimit(4);
        await using var app = await KestrelApp.StartAsync(registration, o => o.Limit = limit);

        using var leave = new CancellationTokenSource();
        var running = app.Client.GetAsync("/abortable", leave.Token);
        await app.Gate.EnteredAsync();
        leave.Cancel(); // HttpClient closes the connection; the handler returns once Kestrel sees it gone
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => running);

        await Wait.UntilAsync(() => limit.Outcomes.Count >= 1, "an outcome recorded");
        Assert.Equal([ItemOutcome.Canceled], limit.Outcomes);
        await Wait.UntilAsync(() => limit.InFlight == 0, "the permit went back");
        Assert.Equal(0, app.Admission.Held);
    }

    [Theory]
    [InlineData(Registration.Middleware, 503)]
    [InlineData(Registration.GlobalLimiter, 503)]
    [InlineData(Registration.NamedPolicy, 503)]
    [InlineData(Registration.Middleware, 429)]
    [InlineData(Registration.GlobalLimiter, 429)]
    [InlineData(Registration.NamedPolicy, 429)]
    public async Task Request_NoPermitAndNoQueue_RefusedAtOnceWithTheStatusAndRetryAfterAndHoldsNothing(Registration registration, int rejectionStatus)
    {
        var limit = ConcurrencyLimit.Fixed(1);
        await using var app = await KestrelApp.StartAsync(registration, o =>
        {
            o.Limit = limit;
            o.QueueLimit = 0;
            o.RejectionStatusCode = rejectionStatus;
            o.RetryAfter = TimeSpan.FromSeconds(1.5);
        });

        var a = app.Client.GetAsync("/work?id=a");
        await app.Gate.EnteredAsync();
        using var refused = await app.Client.GetAsync("/work?id=b");
        using var health = await app.Client.GetAsync("/healthz"); // exempt: answers while the limit is full

        Assert.Equal((HttpStatusCode)rejectionStatus, refused.StatusCode);
        Assert.Equal(TimeSpan.FromSeconds(2), refused.Headers.RetryAfter?.Delta);
        Assert.Equal(HttpStatusCode.OK, health.StatusCode);
        Assert.Equal(1, limit.InFlight);
        Assert.Equal(1, app.Admission.Counts.Refused);
        app.Gate.OpenAll();
        using var admitted = await a;
        Assert.Equal(HttpStatusCode.OK, admitted.StatusCode);
        Assert.Equal(["a"], app.Gate.Order);
        await Wait.UntilAsync(() => limit.InFlight == 0, "the admitted request's permit went back");
        Assert.Equal(0, app.Admission.Held);
    }

    [Theory]
    [InlineData(Registration.Middleware)]
    [InlineData(Registration.GlobalLimiter)]
    [InlineData(Registration.NamedPolicy)]
    public async Task Queue_ClientLeavesWhileQueued_FreesItsPlaceAndTheNextIsServedInIt(Registration registration)
    {
        var limit = ConcurrencyLimit.Fixed(1);
        await using var app = await KestrelApp.StartAsync(registration, o => { o.Limit = limit; o.QueuePerPermit = 1; o.RejectionStart = 1; });

        var a = app.Client.GetAsync("/work?id=a");
        await app.Gate.EnteredAsync();
        using var leave = new CancellationTokenSource();
        var b = app.Client.GetAsync("/work?id=b", leave.Token);
        await Wait.UntilAsync(() => app.Admission.Queued == 1, "b queued");
        using var full = await app.Client.GetAsync("/work?id=c");
        Assert.Equal(HttpStatusCode.ServiceUnavailable, full.StatusCode);

        leave.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => b);
        await Wait.UntilAsync(() => app.Admission.Queued == 0, "b's place freed when its connection closed");
        var d = app.Client.GetAsync("/work?id=d");
        await Wait.UntilAsync(() => app.Admission.Queued == 1, "d queued in b's place");
        app.Gate.OpenAll();
        (await a).Dispose();
        using var served = await d;

        Assert.Equal(HttpStatusCode.OK, served.StatusCode);
        Assert.Equal(["a", "d"], app.Gate.Order);
        Assert.Equal(1, app.Admission.Counts.Canceled);
        await Wait.UntilAsync(() => limit.InFlight == 0 && app.Admission.Held == 0, "every permit went back, none to the departed request");
    }

    [Theory]
    [InlineData(Registration.GlobalLimiter)]
    [InlineData(Registration.NamedPolicy)]
    public async Task Queue_CriticalArrivesAfterNormal_ServedFirst(Registration registration)
    {
        var limit = ConcurrencyLimit.Fixed(1);
        await using var app = await KestrelApp.StartAsync(registration, o => { o.Limit = limit; o.QueuePerPermit = 3; o.RejectionStart = 1; });

        var a = app.Client.GetAsync("/work?id=a");
        await app.Gate.EnteredAsync();
        var normal = app.Client.GetAsync("/work?id=normal");
        await Wait.UntilAsync(() => app.Admission.Queued == 1, "normal queued");
        var critical = app.Client.GetAsync("/critical?id=critical");
        await Wait.UntilAsync(() => app.Admission.Queued == 2, "critical queued");
        app.Gate.OpenAll();
        foreach (var response in await Task.WhenAll(a, normal, critical))
        {
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            response.Dispose();
        }

        Assert.Equal(["a", "critical", "normal"], app.Gate.Order);
    }
}
