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
    [InlineData(10, 0.2, 0, 2)]  // no demand: the minimum share, floor(0.2 x 10)
    [InlineData(10, 0.2, 4, 4)]  // the higher priorities held 4 at once lately: 4 kept
    [InlineData(5, 0.2, 4, 4)]   // at most current - 1: the lower priorities still run one
    [InlineData(5, 0.2, 9, 4)]
    [InlineData(4, 0.2, 0, 0)]   // a small limit's share rounds down to nothing
    [InlineData(4, 0.2, 3, 3)]   // ... but the demand is kept whole: the fixed share reserved 0 here
    [InlineData(1, 0.2, 3, 0)]
    public void ReserveFor_DemandAboveTheShare_KeepsTheDemandUpToAllButOne(int current, double share, int demand, int expected)
    {
        Assert.Equal(expected, RequestAdmission.ReserveFor(current, share, demand));
    }

    [Fact]
    public async Task AdmitAsync_CriticalHeldThreeAtOnce_SheddableLeavesThreeFreeUnderALimitOfFive()
    {
        // The share alone (floor(0.2 x 5) = 1) would let sheddable requests take 4 of 5; the critical demand (3) keeps 3.
        var time = new FakeTimeProvider();
        var limit = ConcurrencyLimit.Fixed(5);
        using var admission = Admission(limit, time, reserve: 0.2);
        for (var i = 0; i < 3; i++)
        {
            Assert.Equal(AdmissionStatus.Admitted, await admission.AdmitAsync(RequestPriority.Critical, default));
        }

        Assert.Equal(3, admission.DemandOf(RequestPriority.Critical));
        for (var i = 0; i < 3; i++)
        {
            admission.Release(RequestPriority.Critical);
        }

        // The critical requests ended: their demand stands (their peak lately), so sheddable requests take 5 - 3 = 2.
        Assert.Equal(AdmissionStatus.Admitted, await admission.AdmitAsync(RequestPriority.Sheddable, default));
        Assert.Equal(AdmissionStatus.Admitted, await admission.AdmitAsync(RequestPriority.Sheddable, default));
        var waiting = admission.AdmitAsync(RequestPriority.Sheddable, default).AsTask();
        Assert.False(waiting.IsCompleted);
        Assert.Equal(2, admission.Held);
        Assert.Equal(2, limit.InFlight);

        // Critical arrivals find their three permits free, past the waiting sheddable one.
        for (var i = 0; i < 3; i++)
        {
            Assert.Equal(AdmissionStatus.Admitted, await admission.AdmitAsync(RequestPriority.Critical, default));
        }

        Assert.Equal(3, admission.HeldBy(RequestPriority.Critical));
        Assert.Equal(5, limit.InFlight);
        Assert.Equal((8L, 0L), (admission.Counts.AdmittedAtOnce, admission.Counts.AdmittedFromQueue));

        // Critical ones ending do not give sheddable requests more room than theirs: the limit is free, the reserve is not.
        for (var i = 0; i < 3; i++)
        {
            admission.Release(RequestPriority.Critical);
        }

        Assert.False(waiting.IsCompleted);
        Assert.Equal(2, limit.InFlight);

        // A sheddable one ending makes room for the waiting one.
        admission.Release(RequestPriority.Sheddable);
        Assert.Equal(AdmissionStatus.Admitted, await waiting.WaitAsync(TimeSpan.FromSeconds(30))); // a guard against a hang, not a timing
        Assert.Equal(2, admission.HeldBy(RequestPriority.Sheddable));
        admission.Release(RequestPriority.Sheddable);
        admission.Release(RequestPriority.Sheddable);
        Assert.Equal(0, admission.Held);
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public async Task AdmitAsync_DemandWindowsPass_TheDemandFollowsTheLatestPeak()
    {
        var time = new FakeTimeProvider();
        var limit = ConcurrencyLimit.Fixed(8);
        using var admission = Admission(limit, time);
        for (var i = 0; i < 4; i++)
        {
            Assert.Equal(AdmissionStatus.Admitted, await admission.AdmitAsync(RequestPriority.Critical, default));
        }

        for (var i = 0; i < 4; i++)
        {
            admission.Release(RequestPriority.Critical);
        }

        // One window on, the peak of 4 is the window before's: still the demand. Two on, a single critical request sets it.
        time.Advance(RequestAdmission.ReserveHold);
        Assert.Equal(AdmissionStatus.Admitted, await admission.AdmitAsync(RequestPriority.Critical, default));
        Assert.Equal(4, admission.DemandOf(RequestPriority.Critical));
        time.Advance(RequestAdmission.ReserveHold);
        admission.Release(RequestPriority.Critical);
        Assert.Equal(AdmissionStatus.Admitted, await admission.AdmitAsync(RequestPriority.Critical, default));
        Assert.Equal(1, admission.DemandOf(RequestPriority.Critical));

        // 8 - max(floor(0.25 x 8), demand 1) = 6 for sheddable requests.
        for (var i = 0; i < 6; i++)
        {
            Assert.Equal(AdmissionStatus.Admitted, await admission.AdmitAsync(RequestPriority.Sheddable, default));
        }

        var waiting = admission.AdmitAsync(RequestPriority.Sheddable, default).AsTask();
        Assert.False(waiting.IsCompleted);
        admission.Dispose();
        Assert.Equal(AdmissionStatus.Refused, await waiting.WaitAsync(TimeSpan.FromSeconds(30))); // a guard against a hang, not a timing
        admission.Release(RequestPriority.Critical);
        for (var i = 0; i < 6; i++)
        {
            admission.Release(RequestPriority.Sheddable);
        }

        Assert.Equal(0, admission.Held);
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public async Task AdmitAsync_CriticalAbout_SheddableCannotTakeTheReserveAndCriticalTakesIt()
    {
        var time = new FakeTimeProvider();
        var limit = ConcurrencyLimit.Fixed(8);
        using var admission = Admission(limit, time);
        Assert.Equal(AdmissionStatus.Admitted, await admission.AdmitAsync(RequestPriority.Critical, default));
        for (var i = 0; i < 6; i++)
        {
            Assert.Equal(AdmissionStatus.Admitted, await admission.AdmitAsync(RequestPriority.Sheddable, default)); // 8 - max(floor(0.25 x 8), demand 1) = 6
        }

        // A permit is free, but it is the reserve: the sheddable request waits (without one) instead of taking it.
        var waiting = admission.AdmitAsync(RequestPriority.Sheddable, default).AsTask();
        Assert.False(waiting.IsCompleted);
        Assert.Equal(1, admission.Queued);
        Assert.Equal(7, limit.InFlight);

        // A critical request takes the reserve at once, past the waiting sheddable one (not through the queue).
        Assert.Equal(AdmissionStatus.Admitted, await admission.AdmitAsync(RequestPriority.Critical, default));
        Assert.Equal((8L, 0L), (admission.Counts.AdmittedAtOnce, admission.Counts.AdmittedFromQueue));
        Assert.Equal(8, limit.InFlight);
        Assert.Equal(8, admission.Held);
        Assert.False(waiting.IsCompleted);

        // A sheddable request ends: 5 sheddable held, room for the waiting one, which the returned place wakes.
        admission.Release(RequestPriority.Sheddable);
        Assert.Equal(AdmissionStatus.Admitted, await waiting.WaitAsync(TimeSpan.FromSeconds(30))); // a guard against a hang, not a timing
        Assert.Equal(8, admission.Held);
        Assert.Equal(6, admission.HeldBy(RequestPriority.Sheddable));
        Assert.Equal(8, limit.InFlight);
        Assert.Equal(0, admission.Queued);

        admission.Release(RequestPriority.Critical);
        admission.Release(RequestPriority.Critical);
        for (var i = 0; i < 6; i++)
        {
            admission.Release(RequestPriority.Sheddable);
        }

        Assert.Equal(0, admission.Held);
        Assert.Equal(0, limit.InFlight);
    }

    [Fact]
    public async Task AdmitAsync_NoCriticalForASecond_SheddableTakesTheWholeLimit()
    {
        var time = new FakeTimeProvider();
        var limit = ConcurrencyLimit.Fixed(4);
        using var admission = Admission(limit, time);
        Assert.Equal(AdmissionStatus.Admitted, await admission.AdmitAsync(RequestPriority.Critical, default));
        admission.Release(RequestPriority.Critical);
        for (var i = 0; i < 3; i++)
        {
            Assert.Equal(AdmissionStatus.Admitted, await admission.AdmitAsync(RequestPriority.Sheddable, default)); // 4 - 1 reserved
        }

        var waiting = admission.AdmitAsync(RequestPriority.Sheddable, default).AsTask();
        Assert.False(waiting.IsCompleted);

        // A second without a critical request: its reserve lapses, and the next place given back wakes the waiting one.
        time.Advance(RequestAdmission.ReserveHold);
        admission.Release(RequestPriority.Sheddable);
        Assert.Equal(AdmissionStatus.Admitted, await waiting.WaitAsync(TimeSpan.FromSeconds(30))); // a guard against a hang, not a timing
        Assert.Equal(AdmissionStatus.Admitted, await admission.AdmitAsync(RequestPriority.Sheddable, default));
        Assert.Equal(4, limit.InFlight);
        Assert.Equal(4, admission.Held);
        for (var i = 0; i < 4; i++)
        {
            admission.Release(RequestPriority.Sheddable);
        }

        Assert.Equal(0, admission.Held);
    }

    [Fact]
    public async Task AdmitAsync_ReserveZero_SheddableTakesEveryPermit()
    {
        var time = new FakeTimeProvider();
        var limit = ConcurrencyLimit.Fixed(4);
        using var admission = Admission(limit, time, reserve: 0);
        Assert.Equal(AdmissionStatus.Admitted, await admission.AdmitAsync(RequestPriority.Critical, default));
        for (var i = 0; i < 3; i++)
        {
            Assert.Equal(AdmissionStatus.Admitted, await admission.AdmitAsync(RequestPriority.Sheddable, default));
        }

        Assert.Equal(4, limit.InFlight);
        admission.Release(RequestPriority.Critical);
        for (var i = 0; i < 3; i++)
        {
            admission.Release(RequestPriority.Sheddable);
        }

        Assert.Equal(0, admission.Held);
    }

    [Fact]
    public async Task AdmitAsync_WaitingForTheReserveThenCanceledOrTimedOut_HoldsNothing()
    {
        var time = new FakeTimeProvider();
        var limit = ConcurrencyLimit.Fixed(4);
        using var admission = new RequestAdmission(
            new FanOutConcurrencyOptions { Limit = limit, QueuePerPermit = 4, RejectionStart = 1, QueueTimeout = TimeSpan.FromSeconds(0.5), PriorityReserve = 0.25, TimeProvider = time },
            NullLogger.Instance);
        Assert.Equal(AdmissionStatus.Admitted, await admission.AdmitAsync(RequestPriority.Critical, default));
        admission.Release(RequestPriority.Critical); // its demand (1) stands for the hold
        for (var i = 0; i < 3; i++)
        {
            Assert.Equal(AdmissionStatus.Admitted, await admission.AdmitAsync(RequestPriority.Sheddable, default)); // 4 - max(1, demand 1): 3 sheddable, 1 permit free
        }

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
        for (var i = 0; i < 3; i++)
        {
            admission.Release(RequestPriority.Sheddable);
        }

        Assert.Equal(0, admission.Held);
        Assert.Equal(0, limit.InFlight);
        Assert.Equal(1, admission.Counts.Canceled);
    }

    [Fact]
    public async Task Dispose_WhileWaitingForTheReserve_Refused()
    {
        var time = new FakeTimeProvider();
        var limit = ConcurrencyLimit.Fixed(4);
        var admission = Admission(limit, time);
        Assert.Equal(AdmissionStatus.Admitted, await admission.AdmitAsync(RequestPriority.Critical, default));
        admission.Release(RequestPriority.Critical); // its demand (1) stands for the hold
        for (var i = 0; i < 3; i++)
        {
            Assert.Equal(AdmissionStatus.Admitted, await admission.AdmitAsync(RequestPriority.Sheddable, default)); // 3 held: 4 - 1 reserved
        }

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
        var held = 0;
        var peak = 0;

        async Task<AdmissionStatus> OneAsync(int i)
        {
            using var leave = new CancellationTokenSource();
            if (i % 3 == 0)
            {
                leave.CancelAfter(i % 7);
            }

            var status = await admission.AdmitAsync((RequestPriority)(i % 3), leave.Token);
            if (status == AdmissionStatus.Admitted)
            {
                var now = Interlocked.Increment(ref held);
                int seen;
                while (now > (seen = Volatile.Read(ref peak)) && Interlocked.CompareExchange(ref peak, now, seen) != seen)
                {
                }

                await Task.Yield();
                Interlocked.Decrement(ref held);
                admission.Release((RequestPriority)(i % 3));
            }

            return status;
        }

        var statuses = await Task.WhenAll(Enumerable.Range(0, 2000).Select(i => Task.Run(() => OneAsync(i))));

        Assert.Equal(0, limit.InFlight);
        Assert.Equal(0, admission.Held);
        Assert.Equal(0, admission.Queued);
        Assert.InRange(peak, 1, 4);
        var counts = admission.Counts;
        Assert.Equal(statuses.Count(s => s == AdmissionStatus.Admitted), counts.AdmittedAtOnce + counts.AdmittedFromQueue);
        Assert.Equal(statuses.Count(s => s == AdmissionStatus.Canceled), counts.Canceled);
        Assert.Equal(statuses.Count(s => s == AdmissionStatus.Refused), counts.Refused);
        Assert.Equal(2000, counts.AdmittedAtOnce + counts.AdmittedFromQueue + counts.Canceled + counts.Refused);
        Assert.Contains(AdmissionStatus.Admitted, statuses.Where((_, i) => i % 3 == 0)); // sheddable requests still got permits
    }
}
