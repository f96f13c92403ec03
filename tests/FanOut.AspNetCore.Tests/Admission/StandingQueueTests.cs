using FanOut.AspNetCore.Admission;

using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Time.Testing;

namespace FanOut.AspNetCore.Tests.Admission;

/// <summary>
/// A queue that has not been empty for <see cref="FanOutConcurrencyOptions.QueueCongestionInterval"/> gives the requests that
/// join it <see cref="FanOutConcurrencyOptions.CongestedQueueTimeout"/> (CoDel for request queues), on a fake clock.
/// </summary>
public sealed class StandingQueueTests
{
    private static readonly TimeSpan s_interval = TimeSpan.FromMilliseconds(100);
    private static readonly TimeSpan s_short = TimeSpan.FromMilliseconds(5);

    private static RequestAdmission Admission(ConcurrencyLimit limit, TimeProvider time) => new(
        new FanOutConcurrencyOptions
        {
            Limit = limit,
            QueuePerPermit = 8,
            RejectionStart = 1,
            PriorityReserve = 0,
            QueueTimeout = TimeSpan.FromMinutes(1),
            QueueCongestionInterval = s_interval,
            CongestedQueueTimeout = s_short,
            TimeProvider = time,
        },
        NullLogger.Instance);

    [Fact]
    public async Task AdmitAsync_QueueNotEmptyForTheInterval_LaterArrivalRefusedAfterTheShortWait()
    {
        var time = new FakeTimeProvider();
        var limit = ConcurrencyLimit.Fixed(1);
        using var admission = Admission(limit, time);
        Assert.True(limit.TryAcquire());
        var first = admission.AdmitAsync(RequestPriority.Normal, default).AsTask(); // the queue stops being empty now

        time.Advance(s_interval - TimeSpan.FromMilliseconds(1));
        var beforeInterval = admission.AdmitAsync(RequestPriority.Normal, default).AsTask(); // a burst, not yet a standing queue
        time.Advance(TimeSpan.FromMilliseconds(1));
        var standing = admission.AdmitAsync(RequestPriority.Normal, default).AsTask();       // not empty for 100 ms: 5 ms
        time.Advance(s_short - TimeSpan.FromTicks(1));
        Assert.Equal((3, 0L), (admission.Queued, admission.Counts.Refused));
        time.Advance(TimeSpan.FromTicks(1));

        // The fake clock fires the timer inside Advance: the request is out of the queue and refused by now.
        Assert.Equal((2, 1L), (admission.Queued, admission.Counts.Refused));
        Assert.Equal(AdmissionStatus.Refused, await standing);
        Assert.False(first.IsCompleted);
        Assert.False(beforeInterval.IsCompleted);

        // Those that joined before it stood keep their full wait, and every permit still has one owner.
        limit.Release();
        Assert.Equal(AdmissionStatus.Admitted, await first);
        admission.Release();
        Assert.Equal(AdmissionStatus.Admitted, await beforeInterval);
        admission.Release();
        Assert.Equal(0, limit.InFlight);
        Assert.Equal(0, admission.Held);
        Assert.Equal(0, admission.Queued);
    }

    [Fact]
    public async Task AdmitAsync_QueueEmptiedMeanwhile_CongestionCountsFromTheNextArrival()
    {
        var time = new FakeTimeProvider();
        var limit = ConcurrencyLimit.Fixed(1);
        using var admission = Admission(limit, time);
        Assert.True(limit.TryAcquire());
        var first = admission.AdmitAsync(RequestPriority.Normal, default).AsTask();
        time.Advance(s_interval);
        var standing = admission.AdmitAsync(RequestPriority.Normal, default).AsTask();
        time.Advance(s_short);
        Assert.Equal((1, 1L), (admission.Queued, admission.Counts.Refused));
        Assert.Equal(AdmissionStatus.Refused, await standing);

        // The queue empties (its one request admitted): the next arrival starts a new burst with the full wait.
        limit.Release();
        Assert.Equal(AdmissionStatus.Admitted, await first);
        Assert.Equal(0, admission.Queued);
        var afterEmpty = admission.AdmitAsync(RequestPriority.Normal, default).AsTask();
        time.Advance(s_interval - TimeSpan.FromMilliseconds(1));
        Assert.False(afterEmpty.IsCompleted);

        // ... and stands again one interval after it.
        time.Advance(TimeSpan.FromMilliseconds(1));
        var standingAgain = admission.AdmitAsync(RequestPriority.Normal, default).AsTask();
        time.Advance(s_short);
        Assert.Equal((1, 2L), (admission.Queued, admission.Counts.Refused));
        Assert.Equal(AdmissionStatus.Refused, await standingAgain);
        Assert.False(afterEmpty.IsCompleted);

        admission.Release();
        Assert.Equal(AdmissionStatus.Admitted, await afterEmpty);
        admission.Release();
        Assert.Equal(0, limit.InFlight);
        Assert.Equal(0, admission.Held);
        Assert.Equal((2L, 2L), (admission.Counts.AdmittedFromQueue, admission.Counts.Refused));
    }

    [Fact]
    public async Task AdmitAsync_StandingQueue_CriticalKeepsTheQueueTimeoutAndIsServedFirst()
    {
        var time = new FakeTimeProvider();
        var limit = ConcurrencyLimit.Fixed(1);
        using var admission = Admission(limit, time);
        Assert.True(limit.TryAcquire());
        var first = admission.AdmitAsync(RequestPriority.Normal, default).AsTask();
        time.Advance(s_interval);

        var sheddable = admission.AdmitAsync(RequestPriority.Sheddable, default).AsTask();
        var critical = admission.AdmitAsync(RequestPriority.Critical, default).AsTask();
        time.Advance(TimeSpan.FromSeconds(30));

        Assert.Equal((2, 1L), (admission.Queued, admission.Counts.Refused));
        Assert.Equal(AdmissionStatus.Refused, await sheddable);
        Assert.False(critical.IsCompleted);
        limit.Release();
        Assert.Equal(AdmissionStatus.Admitted, await critical);
        admission.Release();
        Assert.Equal(AdmissionStatus.Admitted, await first);
        admission.Release();
        Assert.Equal(0, limit.InFlight);
        Assert.Equal(0, admission.Held);
    }

    [Fact]
    public async Task AdmitAsync_StandingQueueRacingCancellations_EveryPermitHasOneOwner()
    {
        // The short waits race grants and cancellations on the real clock (a queue of 2,000 stands for more than 100 ms on
        // any machine); the race's invariants hold whichever wins.
        var limit = ConcurrencyLimit.Fixed(4);
        using var admission = new RequestAdmission(
            new FanOutConcurrencyOptions { Limit = limit, QueueLimit = 1000, QueuePerPermit = 100, RejectionStart = 1, QueueCongestionInterval = TimeSpan.FromMilliseconds(1), CongestedQueueTimeout = TimeSpan.FromMilliseconds(1) },
            NullLogger.Instance);

        var (_, peak) = await AdmissionRace.RunAsync(admission, limit, i => (RequestPriority)(i % 3));

        Assert.InRange(peak, 1, 4);
    }
}
