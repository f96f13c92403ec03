using FanOut.AspNetCore.Admission;

using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Time.Testing;

namespace FanOut.AspNetCore.Tests.Admission;

/// <summary>A sheddable and a normal request's wait, bounded in measured service times; critical requests keep the queue timeout.</summary>
public sealed class SheddableWaitTests
{
    private static readonly TimeSpan s_served = TimeSpan.FromMilliseconds(40);

    /// <summary>One permit, no reserve, no random refusals, a long queue timeout: only the wait bounds can refuse (normal's 104 service times unless said).</summary>
    private static RequestAdmission Admission(ConcurrencyLimit limit, TimeProvider time, double sheddableWait, double normalWait = 100) => new(
        new FanOutConcurrencyOptions
        {
            Limit = limit,
            QueuePerPermit = 4,
            RejectionStart = 1,
            PriorityReserve = 0,
            QueueTimeout = TimeSpan.FromMinutes(1),
            SheddableWaitPerServiceTime = sheddableWait,
            NormalWaitPerServiceTime = normalWait,
            TimeProvider = time,
        },
        NullLogger.Instance);

    /// <summary>Admits and serves one request that took <see cref="s_served"/>, then admits one that holds the only permit.</summary>
    private static async Task ServeOneThenHoldThePermitAsync(RequestAdmission admission)
    {
        await admission.AdmitAtOnceAsync(RequestPriority.Normal);
        admission.Release(s_served);
        Assert.Equal(s_served, admission.ServiceTime);
        await admission.AdmitAtOnceAsync(RequestPriority.Normal);
    }

    [Fact]
    public async Task AdmitAsync_SheddableWaitedHalfAServiceTime_RefusedWhileCriticalAndNormalStillWait()
    {
        var time = new FakeTimeProvider();
        var limit = ConcurrencyLimit.Fixed(1);
        using var admission = Admission(limit, time, sheddableWait: 0.5);
        await ServeOneThenHoldThePermitAsync(admission);

        var sheddable = admission.AdmitAsync(RequestPriority.Sheddable, default).AsTask();
        var normal = admission.AdmitAsync(RequestPriority.Normal, default).AsTask();
        var critical = admission.AdmitAsync(RequestPriority.Critical, default).AsTask();
        Assert.Equal(3, admission.Queued);

        time.Advance(TimeSpan.FromMilliseconds(19));
        Assert.False(sheddable.IsCompleted);
        time.Advance(TimeSpan.FromMilliseconds(1)); // half of 40 ms

        Assert.Equal(AdmissionStatus.Refused, await sheddable.WaitAsync(TimeSpan.FromSeconds(30))); // a guard against a hang, not a timing
        Assert.Equal(2, admission.Queued);
        Assert.Equal(1, admission.Counts.Refused);
        time.Advance(TimeSpan.FromSeconds(4)); // 100 service times: the normal request's bound here is 104
        Assert.False(normal.IsCompleted);
        Assert.False(critical.IsCompleted);

        admission.Release();
        Assert.Equal(AdmissionStatus.Admitted, await critical.WaitAsync(TimeSpan.FromSeconds(30)));
        admission.Release();
        Assert.Equal(AdmissionStatus.Admitted, await normal.WaitAsync(TimeSpan.FromSeconds(30)));
        Assert.Equal(0, admission.Queued);
        admission.ReleaseAll(1);
    }

    [Fact]
    public async Task AdmitAsync_NormalWaitedItsQueueAndTwoServiceTimes_RefusedWhileCriticalStillWaits()
    {
        var time = new FakeTimeProvider();
        var limit = ConcurrencyLimit.Fixed(1);
        using var admission = Admission(limit, time, sheddableWait: 0.5, normalWait: 2);
        await ServeOneThenHoldThePermitAsync(admission);

        var normal = admission.AdmitAsync(RequestPriority.Normal, default).AsTask();
        var critical = admission.AdmitAsync(RequestPriority.Critical, default).AsTask();
        Assert.Equal(2, admission.Queued);

        // QueuePerPermit 4 + NormalWaitPerServiceTime 2 = 6 service times of 40 ms.
        time.Advance(TimeSpan.FromMilliseconds(239));
        Assert.False(normal.IsCompleted);
        time.Advance(TimeSpan.FromMilliseconds(1));

        Assert.Equal(AdmissionStatus.Refused, await normal.WaitAsync(TimeSpan.FromSeconds(30))); // a guard against a hang, not a timing
        Assert.Equal(1, admission.Queued);
        time.Advance(TimeSpan.FromSeconds(30)); // critical requests wait the queue timeout (a minute here)
        Assert.False(critical.IsCompleted);

        admission.Release();
        Assert.Equal(AdmissionStatus.Admitted, await critical.WaitAsync(TimeSpan.FromSeconds(30)));
        admission.ReleaseAll(1);
    }

    [Theory]
    [InlineData(RequestPriority.Sheddable, 0.5)]
    [InlineData(RequestPriority.Normal, 2.1)]  // QueuePerPermit 0.1 + 2
    [InlineData(RequestPriority.Critical, double.PositiveInfinity)]
    public void WaitBound_Defaults_SheddableHalfNormalItsQueuePlusTwoCriticalUnbounded(RequestPriority priority, double expected)
    {
        var defaults = new FanOutConcurrencyOptions();

        var bound = RequestAdmission.WaitBound(priority, defaults.SheddableWaitPerServiceTime, defaults.NormalWaitPerServiceTime, defaults.QueuePerPermit);

        Assert.Equal(expected, bound);
    }

    [Fact]
    public void WaitBound_NormalBelowSheddable_NormalWaitsAsLongAsSheddable()
    {
        Assert.Equal(3, RequestAdmission.WaitBound(RequestPriority.Normal, sheddableWait: 3, normalWait: 0, queuePerPermit: 1));
    }

    [Fact]
    public async Task AdmitAsync_NothingServedYet_SheddableWaitsTheQueueTimeout()
    {
        var time = new FakeTimeProvider();
        var limit = ConcurrencyLimit.Fixed(1);
        using var admission = Admission(limit, time, sheddableWait: 0.5);
        await admission.AdmitAtOnceAsync(RequestPriority.Normal);
        Assert.Null(admission.ServiceTime);

        var sheddable = admission.AdmitAsync(RequestPriority.Sheddable, default).AsTask();
        time.Advance(TimeSpan.FromSeconds(59));
        Assert.False(sheddable.IsCompleted);

        admission.Release(); // a request that was not served (no time): still nothing measured
        Assert.Equal(AdmissionStatus.Admitted, await sheddable.WaitAsync(TimeSpan.FromSeconds(30)));
        Assert.Null(admission.ServiceTime);
        admission.ReleaseAll(1);
    }

    [Fact]
    public async Task AdmitAsync_SheddableWaitZero_RefusedAtOnceInsteadOfQueuedAndAdmittedWhenAPermitIsFree()
    {
        var time = new FakeTimeProvider();
        var limit = ConcurrencyLimit.Fixed(1);
        using var admission = Admission(limit, time, sheddableWait: 0);
        await ServeOneThenHoldThePermitAsync(admission);

        var refused = admission.AdmitAsync(RequestPriority.Sheddable, default);
        Assert.True(refused.IsCompleted);
        Assert.Equal(AdmissionStatus.Refused, await refused);
        Assert.Equal(0, admission.Queued);
        var normal = admission.AdmitAsync(RequestPriority.Normal, default).AsTask();
        Assert.Equal(1, admission.Queued);

        admission.Release();
        Assert.Equal(AdmissionStatus.Admitted, await normal.WaitAsync(TimeSpan.FromSeconds(30)));
        admission.Release();
        await admission.AdmitAtOnceAsync(RequestPriority.Sheddable); // a free permit: no wait to bound
        admission.ReleaseAll(1);
    }

    [Fact]
    public void ServiceTimeEstimate_OneStallAmongSteadyRequests_MovesItOneStep()
    {
        var estimate = new ServiceTimeEstimate(new FakeTimeProvider());
        estimate.Add(s_served);
        estimate.Add(TimeSpan.FromSeconds(1)); // a stall: a mean would jump by a share of it

        Assert.Equal(s_served.TotalMilliseconds * (1 + (1.0 / ServiceTimeEstimate.StepDivisor)), estimate.Median!.Value.TotalMilliseconds, 3);
        for (var i = 0; i < 4; i++)
        {
            estimate.Add(s_served);
        }

        var step = s_served.TotalMilliseconds / ServiceTimeEstimate.StepDivisor;
        Assert.InRange(estimate.Median!.Value.TotalMilliseconds, s_served.TotalMilliseconds - step, s_served.TotalMilliseconds + step); // back within a step of 40 ms
    }

    [Fact]
    public void ServiceTimeEstimate_ServiceTwiceAsSlow_FollowsWithinAFewDozenRequests()
    {
        var estimate = new ServiceTimeEstimate(new FakeTimeProvider());
        estimate.Add(s_served);
        for (var i = 0; i < 40; i++)
        {
            estimate.Add(2 * s_served);
        }

        Assert.InRange(estimate.Median!.Value.TotalMilliseconds, 77, 83); // steps of a 32nd: 40 x (33/32)^23 is 80
    }
}
