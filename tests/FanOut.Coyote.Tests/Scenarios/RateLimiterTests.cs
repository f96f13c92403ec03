using FanOut.Coyote.Tests.Infrastructure;

using Xunit.Abstractions;

namespace FanOut.Coyote.Tests.Scenarios;

/// <summary>A rate limiter's leases beside the limit's permits: nobody waits for a lease holding a permit, and waiters stay within the limit.</summary>
public sealed class RateLimiterTests(ITestOutputHelper output)
{
    /// <summary>Issue 25: <c>Settable(8)</c> with a token bucket and 200 items had 102 workers queued at the rate limiter at once.</summary>
    [Fact]
    [Trait(DefectTraits.Category, DefectTraits.Defect)]
    public async Task FanOutAsync_SettableWithQueuedLeases_QueuesNoMoreThanTheLimit()
    {
        var exploration = await Explorer.RunAsync(async schedule =>
        {
            var limit = ConcurrencyLimit.Settable(2);
            var occupancy = new Occupancy(limit);
            var call = new Settlement("call", 12);
            var limiter = new ScheduledRateLimiter(schedule)
            {
                GrantPercent = 30,
                OnQueued = queued =>
                {
                    if (queued > occupancy.Ceiling)
                    {
                        occupancy.Violate($"{queued} workers queued at the rate limiter at once, over the limit's {occupancy.Ceiling}");
                    }
                },
            };
            schedule.Describe = () => $"InFlight {limit.InFlight}, in use {occupancy.Current}, queued {limiter.Queued}; {call}";
            var options = new FanOutOptions { Limit = limit, RateLimiter = limiter };
            var results = await call.Items.FanOutAsync(Probe.Body(schedule, occupancy, call, "call"), options);
            Probe.AssertResults(results, call);
            Probe.AssertQuiet(limit, occupancy);
        });

        output.WriteLine(exploration.Summary);
        Assert.True(exploration.Passed, exploration.Summary);
    }

    /// <summary>
    /// Issue 25: a worker queued for a rate-limiter lease kept its permit, so a second call on the same <c>Fixed(1)</c> waited
    /// with no body running. Here the lease comes only once the second call has finished: the wait must not hold the permit.
    /// </summary>
    [Fact]
    [Trait(DefectTraits.Category, DefectTraits.Defect)]
    public async Task FanOutAsync_LeaseComesAfterAnotherCallOnFixedOne_OtherCallRunsMeanwhile()
    {
        var exploration = await Explorer.RunAsync(async schedule =>
        {
            var limit = ConcurrencyLimit.Fixed(1);
            var occupancy = new Occupancy(limit);
            var leased = new Settlement("leased call", 1 + schedule.Next(3));
            var other = new Settlement("other call", 1 + schedule.Next(2));
            var otherDone = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            var limiter = new ScheduledRateLimiter(schedule) { GrantPercent = 50, Gate = otherDone.Task };
            schedule.Describe = () => $"InFlight {limit.InFlight}, in use {occupancy.Current}, queued for a lease {limiter.Queued}; {leased}; {other}";

            var first = leased.Items.FanOutAsync(Probe.Body(schedule, occupancy, leased, "leased call"), new FanOutOptions { Limit = limit, RateLimiter = limiter });
            await Probe.PointsAsync(schedule, 4);
            var second = other.Items.FanOutAsync(Probe.Body(schedule, occupancy, other, "other call"), new FanOutOptions { Limit = limit });
            Probe.AssertResults(await second, other);
            otherDone.SetResult();
            Probe.AssertResults(await first, leased);
            Probe.AssertQuiet(limit, occupancy);
        });

        output.WriteLine(exploration.Summary);
        Assert.True(exploration.Passed, exploration.Summary);
    }

    /// <summary>
    /// Issue 25: a <c>RateLimiter</c> that throws (one disposed at shutdown throws <see cref="ObjectDisposedException"/>)
    /// leaked the permit taken for its lease. The call fails; every permit comes back, and the limit serves the next call.
    /// </summary>
    [Fact]
    [Trait(DefectTraits.Category, DefectTraits.Defect)]
    public async Task FanOutAsync_RateLimiterThrowsObjectDisposed_EveryPermitComesBack()
    {
        var exploration = await Explorer.RunAsync(async schedule =>
        {
            var limit = schedule.Chance(50) ? ConcurrencyLimit.Fixed(1) : ConcurrencyLimit.Settable(2);
            var occupancy = new Occupancy(limit);
            var leased = new Settlement("leased call", 2 + schedule.Next(4));
            var other = new Settlement("other call", 1 + schedule.Next(3));
            var limiter = new ScheduledRateLimiter(schedule) { GrantPercent = 30, DisposePercent = 10 };
            schedule.Describe = () => $"InFlight {limit.InFlight}, in use {occupancy.Current}; {leased}; {other}";

            var first = leased.Items.FanOutAsync(Probe.Body(schedule, occupancy, leased, "leased call"), new FanOutOptions { Limit = limit, RateLimiter = limiter });

            // Sometimes alone on the limit, sometimes beside another call.
            Task<int[]>? second = null;
            if (schedule.Chance(50))
            {
                await Probe.PointsAsync(schedule, 3);
                second = other.Items.FanOutAsync(Probe.Body(schedule, occupancy, other, "other call"), new FanOutOptions { Limit = limit });
            }

            try
            {
                Probe.AssertResults(await first, leased);
            }
            catch (Exception e) when (e is not InvariantException)
            {
                leased.AssertAtMostOnce();
            }

            if (second is not null)
            {
                Probe.AssertResults(await second, other);
            }

            Probe.AssertQuiet(limit, occupancy);
            var after = new Settlement("call after", 2);
            Probe.AssertResults(await after.Items.FanOutAsync(Probe.Body(schedule, occupancy, after, "call after"), new FanOutOptions { Limit = limit }), after);
            Probe.AssertQuiet(limit, occupancy);
        });

        output.WriteLine(exploration.Summary);
        Assert.True(exploration.Passed, exploration.Summary);
    }
}
