using FanOut.AspNetCore.Admission;

using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Time.Testing;

namespace FanOut.AspNetCore.Tests.Admission;

/// <summary>The reserve: permits lower priorities may not take while a higher one is about, counted exactly on every path.</summary>
public sealed class PriorityReserveTests
{
    private static RequestAdmission Admission(ConcurrencyLimit limit, TimeProvider time, double reserve = 0.25) => new( // 0.25: a reserve of 1 in 4, 2 in 8
        new FanOutConcurrencyOptions { Limit = limit, QueuePerPermit = 4, RejectionStart = 1, QueueTimeout = TimeSpan.FromMinutes(1), PriorityReserve = reserve, TimeProvider = time },
        NullLogger.Instance);

    [Theory]
    [InlineData(RequestPriority.Sheddable, 10, true, true, 2)]  // floor(0.2 x 10), kept for the highest priority about
    [InlineData(RequestPriority.Sheddable, 10, false, true, 2)]
    [InlineData(RequestPriority.Sheddable, 10, true, false, 2)] // normal is the highest about: the reserve is its
    [InlineData(RequestPriority.Normal, 10, true, true, 2)]
    [InlineData(RequestPriority.Normal, 10, true, false, 0)]    // nobody above normal about
    [InlineData(RequestPriority.Critical, 10, true, true, 0)]   // nobody above critical
    [InlineData(RequestPriority.Sheddable, 5, false, true, 1)]
    [InlineData(RequestPriority.Sheddable, 4, false, true, 0)]  // a small limit reserves nothing: 0.8 rounds down
    public void ReserveFor_EachHigherPrioritySeen_LeavesItsShare(RequestPriority priority, int current, bool normalSeen, bool criticalSeen, int expected)
    {
        bool[] seenLately = [false, normalSeen, criticalSeen]; // index = (int)priority

        var reserve = RequestAdmission.ReserveFor(priority, current, 0.2, seenLately);

        Assert.Equal(expected, reserve);
    }

    [Fact]
    public async Task AdmitAsync_CriticalAbout_SheddableCannotTakeTheReserveAndCriticalTakesIt()
    {
        var time = new FakeTimeProvider();
        var limit = ConcurrencyLimit.Fixed(8);
        using var admission = Admission(limit, time);
        await admission.AdmitAtOnceAsync(RequestPriority.Critical);
        await admission.AdmitAtOnceAsync(RequestPriority.Sheddable, 5); // 6 held: 8 - 2 reserved

        // Two permits are free, but they are the reserve: the sheddable request waits (without one) instead of taking it.
        var waiting = admission.AdmitAsync(RequestPriority.Sheddable, default).AsTask();
        Assert.False(waiting.IsCompleted);
        Assert.Equal(1, admission.Queued);
        Assert.Equal(6, limit.InFlight);

        // Critical requests take the reserve at once, past the waiting sheddable one (not through the queue).
        await admission.AdmitAtOnceAsync(RequestPriority.Critical, 2);
        Assert.Equal((8L, 0L), (admission.Counts.AdmittedAtOnce, admission.Counts.AdmittedFromQueue));
        Assert.Equal(8, limit.InFlight);
        Assert.Equal(8, admission.Held);
        Assert.False(waiting.IsCompleted);

        // Three sheddable requests end: 5 held, room for the waiting one (6), which the returned place wakes.
        admission.Release();
        admission.Release();
        admission.Release();
        Assert.Equal(AdmissionStatus.Admitted, await waiting.WaitAsync(TimeSpan.FromSeconds(30))); // a guard against a hang, not a timing
        Assert.Equal(6, admission.Held);
        Assert.Equal(6, limit.InFlight);
        Assert.Equal(0, admission.Queued);
        admission.ReleaseAll(6);
    }

    [Fact]
    public async Task AdmitAsync_NoCriticalForASecond_SheddableTakesTheWholeLimit()
    {
        var time = new FakeTimeProvider();
        var limit = ConcurrencyLimit.Fixed(4);
        using var admission = Admission(limit, time);
        await admission.AdmitAtOnceAsync(RequestPriority.Critical);
        admission.Release();
        await admission.AdmitAtOnceAsync(RequestPriority.Sheddable, 3); // 4 - 1 reserved

        var waiting = admission.AdmitAsync(RequestPriority.Sheddable, default).AsTask();
        Assert.False(waiting.IsCompleted);

        // A second without a critical request: its reserve lapses, and the next place given back wakes the waiting one.
        time.Advance(RequestAdmission.ReserveHold);
        admission.Release();
        Assert.Equal(AdmissionStatus.Admitted, await waiting.WaitAsync(TimeSpan.FromSeconds(30))); // a guard against a hang, not a timing
        await admission.AdmitAtOnceAsync(RequestPriority.Sheddable);
        Assert.Equal(4, limit.InFlight);
        admission.ReleaseAll(4);
    }

    [Fact]
    public async Task AdmitAsync_ReserveZero_SheddableTakesEveryPermit()
    {
        var time = new FakeTimeProvider();
        var limit = ConcurrencyLimit.Fixed(4);
        using var admission = Admission(limit, time, reserve: 0);
        await admission.AdmitAtOnceAsync(RequestPriority.Critical);
        await admission.AdmitAtOnceAsync(RequestPriority.Sheddable, 3);

        Assert.Equal(4, limit.InFlight);
        admission.ReleaseAll(4);
    }

    [Fact]
    public async Task AdmitAsync_WaitingForTheReserveThenCanceledOrTimedOut_HoldsNothing()
    {
        var time = new FakeTimeProvider();
        var limit = ConcurrencyLimit.Fixed(4);
        using var admission = new RequestAdmission(
            new FanOutConcurrencyOptions { Limit = limit, QueuePerPermit = 4, RejectionStart = 1, QueueTimeout = TimeSpan.FromSeconds(0.5), PriorityReserve = 0.25, TimeProvider = time },
            NullLogger.Instance);
        await admission.AdmitAtOnceAsync(RequestPriority.Critical);
        await admission.AdmitAtOnceAsync(RequestPriority.Sheddable, 2); // 3 held: 4 - 1 reserved
        using var leave = new CancellationTokenSource();
        var canceled = admission.AdmitAsync(RequestPriority.Sheddable, leave.Token).AsTask();
        var timedOut = admission.AdmitAsync(RequestPriority.Sheddable, default).AsTask();
        Assert.Equal(2, admission.Queued);

        leave.Cancel();
        Assert.Equal(AdmissionStatus.Canceled, await canceled);
        time.Advance(TimeSpan.FromSeconds(0.5));
        Assert.Equal(AdmissionStatus.Refused, await timedOut);

        Assert.Equal(0, admission.Queued);
        Assert.Equal(3, admission.Held);
        Assert.Equal(3, limit.InFlight);
        admission.ReleaseAll(3);
        Assert.Equal(1, admission.Counts.Canceled);
    }

    [Fact]
    public async Task Dispose_WhileWaitingForTheReserve_Refused()
    {
        var time = new FakeTimeProvider();
        var limit = ConcurrencyLimit.Fixed(4);
        var admission = Admission(limit, time);
        await admission.AdmitAtOnceAsync(RequestPriority.Critical);
        await admission.AdmitAtOnceAsync(RequestPriority.Sheddable, 2); // 3 held: 4 - 1 reserved

        var waiting = admission.AdmitAsync(RequestPriority.Sheddable, default).AsTask(); // the pump parked: nobody waits on the limit

        admission.Dispose();

        Assert.Equal(AdmissionStatus.Refused, await waiting.WaitAsync(TimeSpan.FromSeconds(30))); // a guard against a hang, not a timing
        Assert.Equal(0, admission.Queued);
        Assert.Equal(3, limit.InFlight);
    }

    [Fact]
    public async Task AdmitAsync_MixedPrioritiesRacingCancellations_EveryPlaceAndPermitGoesBack()
    {
        var limit = ConcurrencyLimit.Fixed(4);
        using var admission = new RequestAdmission(
            new FanOutConcurrencyOptions { Limit = limit, QueueLimit = 1000, QueuePerPermit = 100, RejectionStart = 1, QueueTimeout = TimeSpan.FromMinutes(1), PriorityReserve = 0.5 },
            NullLogger.Instance);
        var (_, peak) = await AdmissionRace.RunAsync(admission, limit, i => (RequestPriority)(i % 3));

        Assert.InRange(peak, 1, 4);

        // Whether a sheddable request won a permit during the race depends on the interleaving (it is refused while anyone
        // queues); after it, the reserve's bookkeeping must leave sheddable requests the limit less at most the reserve.
        await admission.AdmitAtOnceAsync(RequestPriority.Sheddable, 2);
        admission.ReleaseAll(2);
    }
}
