using System.Net;

using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.Time.Testing;

namespace FanOut.AspNetCore.Tests.Middleware;

/// <summary>What the limit learns from each request, and what happens when the limit itself throws.</summary>
public sealed class OutcomeTests
{
    [Theory]
    [InlineData("/status/200", ItemOutcome.Succeeded)]
    [InlineData("/status/404", ItemOutcome.Succeeded)]
    [InlineData("/status/429", ItemOutcome.Succeeded)]
    [InlineData("/status/503", ItemOutcome.Overloaded)]
    [InlineData("/status/504", ItemOutcome.Overloaded)]
    [InlineData("/status/500", ItemOutcome.Failed)]
    [InlineData("/throw", ItemOutcome.Failed)]
    [InlineData("/timeout", ItemOutcome.Overloaded)]
    public async Task Request_Ends_LimitToldItsOutcome(string path, ItemOutcome expected)
    {
        var limit = new RecordingLimit(4);
        await using var app = await TestApp.StartAsync(
            o => o.Limit = limit,
            a => a.MapGet("/timeout", string () => throw new InvalidOperationException("query failed", new TimeoutException())));

        (await app.Client.GetAsync(path)).Dispose();

        await Wait.UntilAsync(() => limit.Outcomes.Count == 1, "one outcome recorded");
        Assert.Equal([expected], limit.Outcomes);
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public async Task Request_Served_ItsTimeTeachesTheServiceTimeAndAFailureDoesNot()
    {
        var time = new FakeTimeProvider();
        var limit = ConcurrencyLimit.Fixed(4);
        await using var app = await TestApp.StartAsync(o => { o.Limit = limit; o.TimeProvider = time; });

        (await app.Client.GetAsync("/status/500")).Dispose();
        await Wait.UntilAsync(() => limit.InFlight == 0, "the failed request's permit went back");
        Assert.Null(app.Admission.ServiceTime); // a failure's time is not a service time

        var served = await app.SendAdmittedAsync("/work?id=a");
        time.Advance(TimeSpan.FromMilliseconds(40));
        app.Gate.OpenAll();
        (await served).Dispose();
        await Wait.UntilAsync(() => limit.InFlight == 0, "the served request's permit went back");

        Assert.Equal(TimeSpan.FromMilliseconds(40), app.Admission.ServiceTime);
    }

    [Fact]
    public async Task Request_ClientAbortsWhileRunning_RecordedAsCanceled()
    {
        var limit = new RecordingLimit(4);
        await using var app = await TestApp.StartAsync(o => o.Limit = limit);

        using var leave = new CancellationTokenSource();
        var running = app.Client.GetAsync("/work?id=a", leave.Token);
        await app.Gate.EnteredAsync();
        leave.Cancel();
        app.Gate.OpenAll(); // the handler ignores the abort and finishes: the limit must still hear "canceled"
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => running);

        await Wait.UntilAsync(() => limit.Outcomes.Count == 1, "one outcome recorded");
        Assert.Equal([ItemOutcome.Canceled], limit.Outcomes);
        await Wait.UntilAsync(() => limit.InFlight == 0, "the permit went back");
    }

    [Fact]
    public async Task Limiter_Throws_FailsOpenByDefault()
    {
        await using var app = await TestApp.StartAsync(o => o.Limit = new ThrowingLimit());

        using var response = await app.Client.GetAsync("/status/200");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
    }

    [Fact]
    public async Task Limiter_ThrowsWithRefuse_RefusedWithRetryAfter()
    {
        await using var app = await TestApp.StartAsync(o => { o.Limit = new ThrowingLimit(); o.LimiterFailure = LimiterFailureMode.Refuse; });

        using var response = await app.Client.GetAsync("/status/200");

        Assert.Equal(HttpStatusCode.ServiceUnavailable, response.StatusCode);
        Assert.NotNull(response.Headers.RetryAfter);
    }

    [Theory]
    [InlineData(LimiterFailureMode.Admit, HttpStatusCode.OK)]
    [InlineData(LimiterFailureMode.Refuse, HttpStatusCode.ServiceUnavailable)]
    public async Task Limiter_ThrowsWhileRequestQueued_QueuedRequestGetsTheFailureMode(LimiterFailureMode mode, HttpStatusCode expected)
    {
        await using var app = await TestApp.StartAsync(o => { o.Limit = new FullThenThrowingLimit(); o.LimiterFailure = mode; o.RejectionStart = 1; });

        using var response = await app.Client.GetAsync("/status/200");

        Assert.Equal(expected, response.StatusCode);
        Assert.Equal(0, app.Admission.Queued);
    }

    [Fact]
    public async Task Adaptive_AppAnswers503_LimitBacksOff()
    {
        var limit = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { InitialLimit = 10, MinLimit = 1 });
        await using var app = await TestApp.StartAsync(o => o.Limit = limit);

        (await app.Client.GetAsync("/status/503")).Dispose();

        await Wait.UntilAsync(() => limit.Current < 10, "the adaptive limit backed off after an overload");
    }
}
