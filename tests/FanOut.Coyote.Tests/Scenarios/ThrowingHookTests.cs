using System.Threading.RateLimiting;

using FanOut.Coyote.Tests.Infrastructure;

using Xunit.Abstractions;

namespace FanOut.Coyote.Tests.Scenarios;

/// <summary>User code of a limit that throws: every permit taken is owned by something that gives it back on that path.</summary>
public sealed class ThrowingHookTests(ITestOutputHelper output)
{
    /// <summary>
    /// Issue 25: a user limit whose start hook throws leaked a permit through <c>AsRateLimiter</c> (capacity 1: every later
    /// call hangs). Two holders take leases while the hook sometimes throws, beside a call whose hook never does.
    /// </summary>
    [Fact]
    [Trait(DefectTraits.Category, DefectTraits.Defect)]
    public async Task AsRateLimiter_UserLimitStartHookThrows_EveryPermitComesBack()
    {
        var exploration = await Explorer.RunAsync(async schedule =>
        {
            var limit = new HookThrowingLimit(schedule, current: 1, throwPercent: 30);
            var occupancy = new Occupancy(limit);
            using var leases = limit.AsRateLimiter();
            var call = new Settlement("call", 2 + schedule.Next(3));
            schedule.Describe = () => $"InFlight {limit.InFlight}, in use {occupancy.Current}; {call}";

            async Task HoldAsync()
            {
                HookThrowingLimit.ThrowHere = true; // this flow only: the call's own starts never throw
                for (var k = 0; k < 2; k++)
                {
                    await Probe.PointsAsync(schedule, 3);
                    RateLimitLease lease;
                    try
                    {
                        lease = schedule.Chance(50) ? leases.AttemptAcquire(1) : await leases.AcquireAsync(1);
                    }
                    catch (Exception e) when (e is not InvariantException)
                    {
                        continue; // the hook threw: the lease was refused, and its permit must be back
                    }

                    using (lease)
                    {
                        if (lease.IsAcquired)
                        {
                            occupancy.Enter("lease");
                            await Probe.PointsAsync(schedule, 2);
                            occupancy.Exit();
                        }
                    }
                }
            }

            var holders = new[] { Task.Run(HoldAsync), Task.Run(HoldAsync) };
            await Probe.PointsAsync(schedule, 3);
            var results = await call.Items.FanOutAsync(Probe.Body(schedule, occupancy, call, "call"), new FanOutOptions { Limit = limit });
            await Task.WhenAll(holders);
            Probe.AssertResults(results, call);
            Probe.AssertQuiet(limit, occupancy);
        });

        output.WriteLine(exploration.Summary);
        Assert.True(exploration.Passed, exploration.Summary);
    }
}
