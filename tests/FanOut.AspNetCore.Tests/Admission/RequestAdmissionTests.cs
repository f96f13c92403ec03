using FanOut.AspNetCore.Admission;

using Microsoft.Extensions.Logging.Abstractions;

namespace FanOut.AspNetCore.Tests.Admission;

/// <summary>The queue itself: gradual rejection by priority with a scripted random draw, permit ownership under races.</summary>
public sealed class RequestAdmissionTests
{
    [Theory]
    [InlineData(RequestPriority.Normal, 0.0, 0.0)]
    [InlineData(RequestPriority.Normal, 0.5, 0.0)]
    [InlineData(RequestPriority.Normal, 0.75, 0.5)]
    [InlineData(RequestPriority.Normal, 1.0, 1.0)]
    [InlineData(RequestPriority.Sheddable, 0.2, 0.0)]
    [InlineData(RequestPriority.Sheddable, 0.375, 0.5)]
    [InlineData(RequestPriority.Sheddable, 0.5, 1.0)]
    [InlineData(RequestPriority.Critical, 0.99, 0.0)]
    public void RefusalChance_RisesWithFillLowestPriorityFirst(RequestPriority priority, double fill, double expected)
    {
        Assert.Equal(expected, RequestAdmission.RefusalChance(priority, fill, rejectionStart: 0.5), 9);
    }

    [Fact]
    public async Task AdmitAsync_QueueFilling_RefusesByTheDraw()
    {
        var limit = ConcurrencyLimit.Fixed(1);
        var draws = new Queue<double>([0.99, 0.99, 0.0, 0.4, 0.6, 0.99, 0.0, 0.99]);
        using var admission = new RequestAdmission(
            new FanOutConcurrencyOptions { Limit = limit, QueuePerPermit = 4, RejectionStart = 0.5, QueueTimeout = TimeSpan.FromMinutes(1) },
            NullLogger.Instance,
            () => draws.Dequeue());
        Assert.True(limit.TryAcquire());

        var queued = new List<Task<AdmissionStatus>>();
        for (var i = 0; i < 3; i++)
        {
            queued.Add(admission.AdmitAsync(RequestPriority.Normal, default).AsTask()); // fill 0, 0.25, 0.5: chance 0
            Assert.Equal(i + 1, admission.Queued);
        }

        var refusedAtHalfChance = await admission.AdmitAsync(RequestPriority.Normal, default); // fill 0.75, chance 0.5, draw 0.4
        Assert.Equal(3, admission.Queued);
        queued.Add(admission.AdmitAsync(RequestPriority.Normal, default).AsTask());            // fill 0.75, chance 0.5, draw 0.6
        Assert.Equal(4, admission.Queued);
        var refusedWhenFull = await admission.AdmitAsync(RequestPriority.Normal, default);     // fill 1: refused (draw 0.99)
        var sheddableWhenFull = await admission.AdmitAsync(RequestPriority.Sheddable, default); // full: nobody below it (draw 0.0)
        var critical = admission.AdmitAsync(RequestPriority.Critical, default).AsTask();       // full: takes the newest normal's place

        Assert.Equal(AdmissionStatus.Refused, refusedAtHalfChance);
        Assert.Equal(AdmissionStatus.Refused, refusedWhenFull);
        Assert.Equal(AdmissionStatus.Refused, sheddableWhenFull);
        Assert.Equal(AdmissionStatus.Refused, await queued[3]);
        queued.RemoveAt(3);
        queued.Insert(0, critical);
        Assert.Equal(4, admission.Queued);
        Assert.All(queued, t => Assert.False(t.IsCompleted));

        limit.Release();
        for (var i = 0; i < queued.Count; i++)
        {
            Assert.Equal(AdmissionStatus.Admitted, await queued[i]);
            Assert.Equal(1, limit.InFlight);
            admission.Release();
        }

        Assert.Equal(0, limit.InFlight);
        Assert.Equal(0, admission.Held);
    }

    [Fact]
    public async Task AdmitAsync_SheddableAtRejectionStart_RefusedWhileNormalQueues()
    {
        var limit = ConcurrencyLimit.Fixed(1);
        using var admission = new RequestAdmission(
            new FanOutConcurrencyOptions { Limit = limit, QueuePerPermit = 4, RejectionStart = 0.5, QueueTimeout = TimeSpan.FromMinutes(1) },
            NullLogger.Instance,
            () => 0.99);
        Assert.True(limit.TryAcquire());
        var first = admission.AdmitAsync(RequestPriority.Normal, default).AsTask();
        var second = admission.AdmitAsync(RequestPriority.Normal, default).AsTask();

        var sheddable = await admission.AdmitAsync(RequestPriority.Sheddable, default); // fill 0.5: chance 1
        var normal = admission.AdmitAsync(RequestPriority.Normal, default).AsTask();    // fill 0.5: chance 0

        Assert.Equal(AdmissionStatus.Refused, sheddable);
        Assert.Equal(3, admission.Queued);
        admission.Dispose();
        Assert.All(await Task.WhenAll(first, second, normal), s => Assert.Equal(AdmissionStatus.Refused, s));
        limit.Release();
    }

    [Theory]
    [InlineData(4, 1)]
    [InlineData(10, 1)]
    [InlineData(11, 2)]
    public async Task AdmitAsync_DefaultQueueRoom_ATenthOfTheLimitRoundedUp(int permits, int room)
    {
        // The adaptive limit's own room is where its extra requests wait; the admission queues only what keeps a permit busy.
        var limit = ConcurrencyLimit.Fixed(permits);
        using var admission = new RequestAdmission(
            new FanOutConcurrencyOptions { Limit = limit, QueueTimeout = TimeSpan.FromMinutes(1) },
            NullLogger.Instance,
            () => 0.99);
        for (var i = 0; i < permits; i++)
        {
            Assert.True(limit.TryAcquire());
        }

        var queued = Enumerable.Range(0, room).Select(_ => admission.AdmitAsync(RequestPriority.Normal, default).AsTask()).ToArray();
        var beyond = admission.AdmitAsync(RequestPriority.Normal, default).AsTask();

        Assert.True(beyond.IsCompleted, $"a request beyond {room} queued"); // a refusal is immediate; a place would hold it until the timeout
        Assert.Equal(AdmissionStatus.Refused, await beyond);
        Assert.Equal(room, admission.Queued);
        Assert.All(queued, t => Assert.False(t.IsCompleted));
        admission.Dispose();
        Assert.All(queued, t => Assert.Equal(AdmissionStatus.Refused, t.Result));
        for (var i = 0; i < permits; i++)
        {
            limit.Release();
        }
    }

    [Fact]
    public async Task AdmitAsync_ShortQueueFull_CriticalStillQueuesUpToThreeLimits()
    {
        var limit = ConcurrencyLimit.Fixed(4);
        using var admission = new RequestAdmission(
            new FanOutConcurrencyOptions { Limit = limit, QueuePerPermit = 0.25, RejectionStart = 1, QueueTimeout = TimeSpan.FromMinutes(1) },
            NullLogger.Instance,
            () => 0.99);
        for (var i = 0; i < 4; i++)
        {
            Assert.True(limit.TryAcquire());
        }

        var normal = admission.AdmitAsync(RequestPriority.Normal, default).AsTask();        // room for 1 (0.25 x 4)
        var refused = await admission.AdmitAsync(RequestPriority.Normal, default);           // full for normal requests
        var critical = Enumerable.Range(0, 11).Select(_ => admission.AdmitAsync(RequestPriority.Critical, default).AsTask()).ToArray();
        var criticalBeyond = admission.AdmitAsync(RequestPriority.Critical, default).AsTask(); // 12 queued: takes the normal's place

        Assert.Equal(AdmissionStatus.Refused, refused);
        Assert.Equal(AdmissionStatus.Refused, await normal);
        Assert.Equal(12, admission.Queued);
        Assert.All(critical, t => Assert.False(t.IsCompleted));
        Assert.False(criticalBeyond.IsCompleted);
        Assert.Equal(AdmissionStatus.Refused, await admission.AdmitAsync(RequestPriority.Critical, default)); // three limits' worth of critical: full
        admission.Dispose();
        for (var i = 0; i < 4; i++)
        {
            limit.Release();
        }
    }

    [Fact]
    public async Task AdmitAsync_ShortServiceTime_CriticalQueuesAStallsWorthBeyondThreeLimits()
    {
        // A 5 ms service at a limit of 2: 100 ms of stall is 40 requests, where three limits hold 6 (15 ms).
        var limit = ConcurrencyLimit.Fixed(2);
        using var admission = new RequestAdmission(
            new FanOutConcurrencyOptions { Limit = limit, QueuePerPermit = 0.25, RejectionStart = 1, PriorityReserve = 0, QueueTimeout = TimeSpan.FromMinutes(1) },
            NullLogger.Instance,
            () => 0.99);
        await admission.AdmitAtOnceAsync(RequestPriority.Normal);
        admission.Release(TimeSpan.FromMilliseconds(5));
        await admission.AdmitAtOnceAsync(RequestPriority.Normal, 2);

        var room = (int)Math.Ceiling(2 * (RequestAdmission.CriticalQueueStall / TimeSpan.FromMilliseconds(5)));
        Assert.True(room > RequestAdmission.CriticalQueueLimits * 2);
        var critical = Enumerable.Range(0, room).Select(_ => admission.AdmitAsync(RequestPriority.Critical, default).AsTask()).ToArray();

        Assert.Equal(room, admission.Queued);
        Assert.All(critical, t => Assert.False(t.IsCompleted));
        Assert.Equal(AdmissionStatus.Refused, await admission.AdmitAsync(RequestPriority.Critical, default)); // a stall's worth: full
        admission.Dispose();
        Assert.All(await Task.WhenAll(critical), s => Assert.Equal(AdmissionStatus.Refused, s));
        limit.Release();
        limit.Release();
    }

    [Fact]
    public async Task AdmitAsync_CancellationsRacingGrants_EveryPermitHasOneOwner()
    {
        var limit = ConcurrencyLimit.Fixed(4);
        using var admission = new RequestAdmission(
            new FanOutConcurrencyOptions { Limit = limit, QueueLimit = 1000, QueuePerPermit = 100, RejectionStart = 1, QueueTimeout = TimeSpan.FromMinutes(1) },
            NullLogger.Instance);
        var (_, peak) = await AdmissionRace.RunAsync(admission, limit, _ => RequestPriority.Normal);

        Assert.InRange(peak, 1, 4);
    }
}
