using FanOut.Coyote.Tests.Infrastructure;

using Xunit.Abstractions;

namespace FanOut.Coyote.Tests.Scenarios;

/// <summary>Several calls, outside holders and a setter on one limit: the limit holds at every step and every permit comes back.</summary>
public sealed class SharedLimitTests(ITestOutputHelper output)
{
    [Fact]
    public async Task FanOutAsync_ThreeCallsOnOneFixedLimit_StayWithinItAndSettleEachItemOnce()
    {
        var exploration = await Explorer.RunAsync(async schedule =>
        {
            var limit = ConcurrencyLimit.Fixed(2);
            var occupancy = new Occupancy(limit);
            var calls = Enumerable.Range(0, 3).Select(i => new Settlement($"call {i}", 2 + schedule.Next(3))).ToArray();
            schedule.Describe = () => $"InFlight {limit.InFlight}, in use {occupancy.Current}; {string.Join("; ", calls.AsEnumerable())}";
            var results = await Task.WhenAll(await StartOneAfterAnotherAsync(schedule, occupancy, limit, calls));
            Probe.AssertResults(results, calls);

            Probe.AssertQuiet(limit, occupancy);
        });

        output.WriteLine(exploration.Summary);
        Assert.True(exploration.Passed, exploration.Summary);
    }

    /// <summary>
    /// <c>Set(n)</c> up and down while two calls run: once <c>InFlight</c> has drained to a lowered value, no permit is
    /// granted above it.
    /// </summary>
    /// <remarks>
    /// <para>
    /// Found by this suite, not listed in issue 25: about one schedule in 100,000 had two (once four) bodies running under
    /// <c>Settable</c> lowered to 1 after <c>InFlight</c> drained to 1, with <c>InFlight</c> 0 at the end (no permit lost
    /// or given back twice). The cause: <c>ConcurrencyLimit.TryTakePermit</c> read <c>Current</c> once, before its
    /// compare-and-swap on the count: a worker that read 4 before <c>Set(1)</c> and swapped after the drain took room that
    /// no longer existed (a torn read: the rule "room is reserved with one atomic operation"). Fixed, with
    /// <c>TryAcquire_LimitLoweredBetweenItsLookAndItsTake_GrantsNothingAboveTheNewLimit</c> in FanOut.Tests.
    /// </para>
    /// <para>
    /// What failed after that fix (about one schedule in 300,000; 10 of 24 runs of 100,000, none of them at CI's 10,000)
    /// was the test's own check, not the product: <see cref="Occupancy"/> compared a count of bodies taken before a drain
    /// with a ceiling lowered after it (its remarks give the interleaving). It now reads both at one instant: 0 of the same
    /// 24 runs fail.
    /// </para>
    /// </remarks>
    [Fact]
    [Trait(DefectTraits.Category, DefectTraits.Defect)]
    public async Task FanOutAsync_SettableSetUpAndDownWhileTwoCallsRun_StaysWithinEveryValue()
    {
        var exploration = await Explorer.RunAsync(async schedule =>
        {
            var limit = ConcurrencyLimit.Settable(2);
            var occupancy = new Occupancy(limit);
            var calls = Enumerable.Range(0, 2).Select(i => new Settlement($"call {i}", 3 + schedule.Next(4))).ToArray();
            schedule.Describe = () => $"Current {limit.Current}, InFlight {limit.InFlight}, in use {occupancy.Current}; {string.Join("; ", calls.AsEnumerable())}";
            var setter = Task.Run(async () =>
            {
                for (var k = 0; k < 3; k++)
                {
                    await Probe.PointsAsync(schedule, 3);
                    var value = 1 + schedule.Next(4);
                    if (value >= limit.Current)
                    {
                        occupancy.Raising(value); // the new room may be taken from the instant Set starts
                        limit.Set(value);
                        continue;
                    }

                    // Lowered: items running finish under the old value; the new one holds once InFlight has drained to it.
                    limit.Set(value);
                    while (!occupancy.Lowered(value))
                    {
                        await Task.Yield();
                    }
                }
            });

            var results = await Task.WhenAll(await StartOneAfterAnotherAsync(schedule, occupancy, limit, calls));
            await setter;
            Probe.AssertResults(results, calls);

            Probe.AssertQuiet(limit, occupancy);
        });

        output.WriteLine(exploration.Summary);
        Assert.True(exploration.Passed, exploration.Summary);
    }

    [Fact]
    public async Task FanOutAsync_OutsideHolderTakesPermitsAndLeases_StaysWithinLimitAndAllComeBack()
    {
        var exploration = await Explorer.RunAsync(async schedule =>
        {
            var limit = ConcurrencyLimit.Fixed(2);
            var occupancy = new Occupancy(limit);
            using var leases = limit.AsRateLimiter();
            var calls = Enumerable.Range(0, 2).Select(i => new Settlement($"call {i}", 2 + schedule.Next(3))).ToArray();
            schedule.Describe = () => $"InFlight {limit.InFlight}, in use {occupancy.Current}; {string.Join("; ", calls.AsEnumerable())}";

            // Takes a permit four ways (TryAcquire, WaitAsync, and a lease tried or awaited), holds it a while, gives it back.
            var holder = Task.Run(async () =>
            {
                for (var k = 0; k < 3; k++)
                {
                    await Probe.PointsAsync(schedule, 3);
                    switch (schedule.Next(4))
                    {
                        case 0 when limit.TryAcquire():
                        case 1 when await limit.WaitAsync():
                            await Probe.HoldAsync(schedule, occupancy, "outside holder");
                            limit.Release();
                            break;
                        case 2:
                            using (var lease = leases.AttemptAcquire(1))
                            {
                                if (lease.IsAcquired)
                                {
                                    await Probe.HoldAsync(schedule, occupancy, "lease tried");
                                }
                            }

                            break;
                        case 3:
                            using (var lease = await leases.AcquireAsync(1))
                            {
                                await Probe.HoldAsync(schedule, occupancy, "lease awaited");
                            }

                            break;
                    }
                }
            });

            var results = await Task.WhenAll(await StartOneAfterAnotherAsync(schedule, occupancy, limit, calls));
            await holder;
            Probe.AssertResults(results, calls);

            Probe.AssertQuiet(limit, occupancy);
        });

        output.WriteLine(exploration.Summary);
        Assert.True(exploration.Passed, exploration.Summary);
    }

    [Fact]
    public async Task FanOutAsync_CanceledMidRunBesideAWaitingHolder_SettlesAtMostOnceAndReturnsEveryPermit()
    {
        var exploration = await Explorer.RunAsync(async schedule =>
        {
            var limit = ConcurrencyLimit.Fixed(2);
            var occupancy = new Occupancy(limit);
            var calls = Enumerable.Range(0, 2).Select(i => new Settlement($"call {i}", 3 + schedule.Next(4))).ToArray();
            using var first = new CancellationTokenSource();
            using var second = new CancellationTokenSource();
            using var holderToken = new CancellationTokenSource();
            schedule.Describe = () => $"InFlight {limit.InFlight}, in use {occupancy.Current}; {string.Join("; ", calls.AsEnumerable())}";
            var holder = Task.Run(async () =>
            {
                if (await limit.WaitAsync(holderToken.Token))
                {
                    await Probe.HoldAsync(schedule, occupancy, "outside holder");
                    limit.Release();
                }
            });

            var tasks = new Task<int[]>[calls.Length];
            for (var i = 0; i < calls.Length; i++)
            {
                tasks[i] = Start(schedule, occupancy, limit, calls, i, (i == 0 ? first : second).Token);
            }

            // Cancel each of the three at a point of the schedule's choosing (or not at all).
            foreach (var source in new[] { first, second, holderToken }.OrderBy(_ => schedule.Next(100)))
            {
                await Probe.PointsAsync(schedule, 4);
                if (schedule.Chance(70))
                {
                    await source.CancelAsync();
                }
            }

            for (var i = 0; i < calls.Length; i++)
            {
                try
                {
                    Probe.AssertResults(await tasks[i], calls[i]);
                }
                catch (OperationCanceledException)
                {
                    calls[i].AssertAtMostOnce();
                }
            }

            await holder;
            Probe.AssertQuiet(limit, occupancy);
        });

        output.WriteLine(exploration.Summary);
        Assert.True(exploration.Passed, exploration.Summary);
    }

    /// <summary>Starts the calls one after the other, a few scheduling points apart.</summary>
    private static async Task<Task<int[]>[]> StartOneAfterAnotherAsync(Schedule schedule, Occupancy occupancy, ConcurrencyLimit limit, Settlement[] calls)
    {
        var tasks = new Task<int[]>[calls.Length];
        for (var i = 0; i < calls.Length; i++)
        {
            await Probe.PointsAsync(schedule, 2);
            tasks[i] = Start(schedule, occupancy, limit, calls, i);
        }

        return tasks;
    }

    /// <summary>
    /// Starts call <paramref name="i"/> on <paramref name="limit"/>. The last call pulls from a lazy source: the workers take
    /// turns to pull (the other half of the protocol).
    /// </summary>
    private static Task<int[]> Start(Schedule schedule, Occupancy occupancy, ConcurrencyLimit limit, Settlement[] calls, int i, CancellationToken cancellationToken = default)
    {
        var body = Probe.Body(schedule, occupancy, calls[i], $"call {i}");
        var options = new FanOutOptions { Limit = limit };
        return i == calls.Length - 1
            ? Probe.Lazy(calls[i].Items, schedule).FanOutAsync(body, options, cancellationToken)
            : calls[i].Items.FanOutAsync(body, options, cancellationToken);
    }
}
