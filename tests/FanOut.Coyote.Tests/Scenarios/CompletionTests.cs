using FanOut.Coyote.Tests.Infrastructure;

using Xunit.Abstractions;

namespace FanOut.Coyote.Tests.Scenarios;

/// <summary>A call completes when its items are settled: it never needs one more permit to find out there is nothing left.</summary>
public sealed class CompletionTests(ITestOutputHelper output)
{
    /// <summary>
    /// Issue 25: on <c>Fixed(1)</c> a call whose items were all done waited for one more permit held by another call (a 1.5 s
    /// item's call returned at 3.0 s). Here the other call's body, once the first call's items are all done, waits for that
    /// call to complete: it must, without the permit.
    /// </summary>
    [Fact]
    [Trait(DefectTraits.Category, DefectTraits.Defect)]
    public async Task FanOutAsync_ItemsDoneWhileAnotherCallHoldsThePermit_CompletesWithoutIt()
    {
        var exploration = await Explorer.RunAsync(async schedule =>
        {
            var limit = ConcurrencyLimit.Fixed(1);
            var occupancy = new Occupancy(limit);
            var done = new Settlement("done call", 1 + schedule.Next(3));
            var holding = new Settlement("holding call", 2 + schedule.Next(2));
            schedule.Describe = () => $"InFlight {limit.InFlight}, in use {occupancy.Current}; {done}; {holding}";

            // An array: its end is known without a pull (a lazy source's end is found only by pulling once more).
            var first = done.Items.FanOutAsync(Probe.Body(schedule, occupancy, done, "done call"), new FanOutOptions { Limit = limit });
            await Probe.PointsAsync(schedule, 3);

            var holdingBody = Probe.Body(schedule, occupancy, holding, "holding call");
            var second = holding.Items.FanOutAsync(
                async (item, token) =>
                {
                    var result = await holdingBody(item, token);

                    // Still under this item's permit: the first call's items are all settled, so it must complete now.
                    if (done.SettledCount == done.Items.Length)
                    {
                        await first;
                    }

                    return result;
                },
                new FanOutOptions { Limit = limit });

            Probe.AssertResults(await first, done);
            Probe.AssertResults(await second, holding);
            Probe.AssertQuiet(limit, occupancy);
        });

        output.WriteLine(exploration.Summary);
        Assert.True(exploration.Passed, exploration.Summary);
    }

    /// <summary>
    /// Issue 25: with an <c>AsRateLimiter</c> lease taken on the same <c>Fixed(1)</c>, a call whose items were done did not
    /// return until the lease was disposed. Here the lease's holder, once the call's items are done, waits for the call.
    /// </summary>
    [Fact]
    [Trait(DefectTraits.Category, DefectTraits.Defect)]
    public async Task FanOutAsync_ItemsDoneWhileALeaseHoldsThePermit_CompletesWithoutIt()
    {
        var exploration = await Explorer.RunAsync(async schedule =>
        {
            var limit = ConcurrencyLimit.Fixed(1);
            var occupancy = new Occupancy(limit);
            using var leases = limit.AsRateLimiter();
            var call = new Settlement("call", 1 + schedule.Next(3));
            schedule.Describe = () => $"InFlight {limit.InFlight}, in use {occupancy.Current}; {call}";
            var run = call.Items.FanOutAsync(Probe.Body(schedule, occupancy, call, "call"), new FanOutOptions { Limit = limit });

            for (var k = 0; k < 2; k++)
            {
                await Probe.PointsAsync(schedule, 4);
                using var lease = await leases.AcquireAsync(1);
                occupancy.Enter("lease");
                await Probe.PointsAsync(schedule, 2);
                if (call.SettledCount == call.Items.Length)
                {
                    await run; // still holding the lease: the call's items are done, so it must complete now
                }

                occupancy.Exit();
            }

            Probe.AssertResults(await run, call);
            Probe.AssertQuiet(limit, occupancy);
        });

        output.WriteLine(exploration.Summary);
        Assert.True(exploration.Passed, exploration.Summary);
    }
}
