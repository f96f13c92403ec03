using System.Net;

using Microsoft.Extensions.Time.Testing;

namespace FanOut.AspNetCore.Tests.Middleware;

/// <summary>Priorities: critical requests served first from the queue, and taking the place of lower ones when it is full.</summary>
public sealed class PriorityTests
{
    [Fact]
    public async Task Queue_CriticalArrivesAfterNormal_ServedFirst()
    {
        var limit = ConcurrencyLimit.Fixed(1);
        await using var app = await TestApp.StartAsync(o => { o.Limit = limit; o.QueuePerPermit = 3; o.RejectionStart = 1; });

        var a = await app.SendAdmittedAsync("/work?id=a");
        var normal = await app.SendQueuedAsync("/work?id=normal", queued: 1);
        var critical = await app.SendQueuedAsync("/critical?id=critical", queued: 2);
        await app.OpenAndAssertAllOkAsync(a, normal, critical);

        Assert.Equal(["a", "critical", "normal"], app.Gate.Order);
    }

    [Fact]
    public async Task Queue_FullOfSheddable_CriticalTakesThePlaceOfTheNewest()
    {
        // Room for 2 (2 x a limit of 1) for the others, 3 for critical requests (three limits' worth).
        var limit = ConcurrencyLimit.Fixed(1);
        await using var app = await TestApp.StartAsync(o => { o.Limit = limit; o.QueuePerPermit = 2; o.RejectionStart = 1; });

        var a = await app.SendAdmittedAsync("/work?id=a");
        var s1 = await app.SendQueuedAsync("/sheddable?id=s1", queued: 1);
        var s2 = await app.SendQueuedAsync("/sheddable?id=s2", queued: 2);
        var critical = await app.SendQueuedAsync("/critical?id=critical", queued: 3); // beside both
        var critical2 = app.Client.GetAsync("/critical?id=critical2");
        using var evicted = await s2;

        Assert.Equal(HttpStatusCode.ServiceUnavailable, evicted.StatusCode);
        Assert.NotNull(evicted.Headers.RetryAfter);
        Assert.Equal(3, app.Admission.Queued);

        // Full of critical and sheddable now: a normal request takes the place of the newest sheddable, s1.
        var normal = app.Client.GetAsync("/work?id=normal");
        using var s1Evicted = await s1;
        Assert.Equal(HttpStatusCode.ServiceUnavailable, s1Evicted.StatusCode);

        // Full of critical and normal: a sheddable one is refused at once.
        using var refused = await app.Client.GetAsync("/sheddable?id=s3");
        Assert.Equal(HttpStatusCode.ServiceUnavailable, refused.StatusCode);

        app.Gate.OpenAll();
        foreach (var response in await Task.WhenAll(a, critical, critical2, normal))
        {
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            response.Dispose();
        }

        Assert.Equal(["a", "critical", "critical2", "normal"], app.Gate.Order);
    }

    [Fact]
    public async Task PrioritySelector_ChoosesPerRequest_OverridesTheEndpoint()
    {
        var limit = ConcurrencyLimit.Fixed(1);
        await using var app = await TestApp.StartAsync(o =>
        {
            o.Limit = limit;
            o.QueuePerPermit = 3;
            o.RejectionStart = 1;
            o.PrioritySelector = c => c.Request.Headers.ContainsKey("X-Critical") ? RequestPriority.Critical : null;
        });

        var a = await app.SendAdmittedAsync("/work?id=a");
        var plain = app.Client.GetAsync("/work?id=plain");
        await Wait.UntilAsync(() => app.Admission.Queued == 1, "plain queued");
        using var request = new HttpRequestMessage(HttpMethod.Get, "/sheddable?id=vip");
        request.Headers.Add("X-Critical", "1");
        var vip = app.Client.SendAsync(request);
        await Wait.UntilAsync(() => app.Admission.Queued == 2, "vip queued");
        app.Gate.OpenAll();
        foreach (var response in await Task.WhenAll(a, plain, vip))
        {
            response.Dispose();
        }

        Assert.Equal(["a", "vip", "plain"], app.Gate.Order);
    }

    [Fact]
    public async Task PrioritySelector_Throws_RequestGetsTheEndpointsPriority()
    {
        var limit = ConcurrencyLimit.Fixed(1);
        await using var app = await TestApp.StartAsync(o =>
        {
            o.Limit = limit;
            o.QueuePerPermit = 3;
            o.RejectionStart = 1;
            o.PrioritySelector = c => c.Request.Query.ContainsKey("boom") ? throw new InvalidOperationException("selector bug") : null;
        });

        var a = await app.SendAdmittedAsync("/work?id=a");
        var plain = await app.SendQueuedAsync("/work?id=plain", queued: 1);
        var critical = await app.SendQueuedAsync("/critical?id=critical&boom=1", queued: 2); // despite its selector throwing
        await app.OpenAndAssertAllOkAsync(a, plain, critical);

        Assert.Equal(["a", "critical", "plain"], app.Gate.Order);
    }

    [Fact]
    public async Task Reserve_HandlerThrowsAndAWaitingClientLeaves_EveryPlaceAndPermitGoesBack()
    {
        // A limit of 4 with a reserve of 1 (0.25 x 4): with a critical request about, normal and sheddable ones stop at 3.
        // The reserve stands for a second after the critical request: on a clock that never moves, however slow the machine.
        var limit = ConcurrencyLimit.Fixed(4);
        await using var app = await TestApp.StartAsync(o => { o.Limit = limit; o.QueuePerPermit = 2; o.RejectionStart = 1; o.PriorityReserve = 0.25; o.TimeProvider = new FakeTimeProvider(); });

        var critical = await app.SendAdmittedAsync("/critical?id=c");
        using var failed = await app.Client.GetAsync("/throw");
        Assert.Equal(HttpStatusCode.InternalServerError, failed.StatusCode);
        await Wait.UntilAsync(() => app.Admission.Held == 1, "the failed request's place went back");
        var s1 = app.Client.GetAsync("/sheddable?id=s1");
        var s2 = app.Client.GetAsync("/sheddable?id=s2");
        await app.Gate.EnteredAsync(2);
        using var leave = new CancellationTokenSource();
        var s3 = app.Client.GetAsync("/sheddable?id=s3", leave.Token);
        await Wait.UntilAsync(() => app.Admission.Queued == 1, "s3 waits: the last permit is the reserve");
        Assert.Equal(3, app.Admission.Held);

        // The pump takes the free permit before it finds no room for s3, then gives it back: read the limit once it has
        // (a CI run read 4 here in that instant). Were s3 admitted, the limit would hold 4 and this would time out.
        await Wait.UntilAsync(() => limit.InFlight == 3, "the pump gave back the permit s3 had no room for");
        Assert.Equal(3, app.Admission.Held);

        leave.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => s3);
        await Wait.UntilAsync(() => app.Admission.Queued == 0, "s3's place freed");
        var c2 = await app.SendAdmittedAsync("/critical?id=c2");
        Assert.Equal(4, app.Admission.Held);

        await app.OpenAndAssertAllOkAsync(critical, s1, s2, c2);

        await Wait.UntilAsync(() => app.Admission.Held == 0 && limit.InFlight == 0, "every place and permit went back");
        Assert.Equal(4, app.Gate.Order.Count);
        Assert.Equal(["c", "c2"], [app.Gate.Order[0], app.Gate.Order[3]]);
    }
}
