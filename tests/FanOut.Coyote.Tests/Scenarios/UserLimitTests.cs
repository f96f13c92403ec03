using FanOut.Coyote.Tests.Infrastructure;

using Xunit.Abstractions;

namespace FanOut.Coyote.Tests.Scenarios;

/// <summary>Limits written outside the protocol's own pool: the loop learns what it needs through the public surface.</summary>
public sealed class UserLimitTests(ITestOutputHelper output)
{
    /// <summary>
    /// Issue 25: a limit written from docs/limits.md's recipe ("permits live elsewhere") was hogged by a FanOut loop (a Polly
    /// pipeline on the same 2 permits got its first one after all 300 of the loop's items started). An outside waiter that
    /// queues while the loop runs gets a permit before the loop starts more than <c>4 x Current</c> further items.
    /// </summary>
    /// <remarks>
    /// The bound is loose on purpose: the permits the loop holds when the waiter queues each finish one item (Current),
    /// and workers between a look and a take may start one more each; 4 x Current leaves room for both, and a hog starts
    /// every item left (here up to 23).
    /// </remarks>
    [Fact]
    [Trait(DefectTraits.Category, DefectTraits.Defect)]
    public async Task FanOutAsync_DocsRecipeLimitBesideAnOutsideWaiter_ServesTheWaiterSoon()
    {
        const int Capacity = 2;
        const int Bound = 4 * Capacity;
        var exploration = await Explorer.RunAsync(async schedule =>
        {
            var limit = new SemaphoreLimit(Capacity);
            var occupancy = new Occupancy(limit);
            var call = new Settlement("call", 24);
            var startedSinceQueued = -1;
            var loopRunning = 0;
            schedule.Describe = () => $"InFlight {limit.InFlight}, in use {occupancy.Current}; {call}";
            var body = Probe.Body(schedule, occupancy, call, "call");
            var run = call.Items.FanOutAsync(
                async (item, token) =>
                {
                    // Counted only when the loop starts an item with every permit its own: once the outside waiter has been
                    // handed a permit that cannot happen, whenever its continuation runs (a count of all starts until the
                    // waiter's code resumes also counts the items started on the loop's remaining permit meanwhile).
                    if (Interlocked.Increment(ref loopRunning) >= Capacity && Volatile.Read(ref startedSinceQueued) >= 0)
                    {
                        Interlocked.Increment(ref startedSinceQueued);
                    }

                    try
                    {
                        return await body(item, token);
                    }
                    finally
                    {
                        Interlocked.Decrement(ref loopRunning);
                    }
                },
                new FanOutOptions { Limit = limit });

            // Queues once the loop has started a few items, and counts the items the loop starts until it is served.
            var after = 1 + schedule.Next(3);
            while (call.SettledCount < after)
            {
                await Task.Yield();
            }

            // Counting starts when the outside waiter is really queued at the semaphore (the test's thread may be descheduled
            // between a write before the call and the queueing, while the loop runs on), and only for the outside waiter (the
            // loop's own waiter runs in the call's flow).
            limit.OnQueued = () =>
            {
                if (!FanOutItem.IsRunning)
                {
                    Volatile.Write(ref startedSinceQueued, 0);
                }
            };
            if (!await limit.WaitAsync())
            {
                throw new InvariantException("an uncanceled wait returned false");
            }

            var started = Interlocked.Exchange(ref startedSinceQueued, -1);
            occupancy.Enter("outside waiter");
            await Probe.PointsAsync(schedule, 2);
            occupancy.Exit();
            limit.Release();
            Probe.AssertResults(await run, call);
            if (started > Bound)
            {
                throw new InvariantException($"the loop started {started} items on every permit while an outside waiter queued (at most {Bound})");
            }

            Probe.AssertQuiet(limit, occupancy);
        });

        output.WriteLine(exploration.Summary);
        Assert.True(exploration.Passed, exploration.Summary);
    }

    /// <summary>
    /// Issue 25: <c>ConcurrencyLimit.Partitioned</c> spun forever in <c>ForKey</c> on a new key once the keys in use reached
    /// <c>MaxIdleKeys</c> (the idle sweep dropped the new, unpinned key and the loop made it again; with
    /// <c>MaxIdleKeys = 0</c> the first use hangs). Calls on more keys than <c>MaxIdleKeys</c> complete.
    /// </summary>
    /// <remarks>On the defective code a schedule's threads spin until the test host exits (the hang is reported at the timeout).</remarks>
    [Fact]
    [Trait(DefectTraits.Category, DefectTraits.Defect)]
    public async Task FanOutAsync_PartitionedKeysBeyondMaxIdleKeys_CompleteWithinTheGlobalLimit()
    {
        var exploration = await Explorer.RunAsync(async schedule =>
        {
            var maxIdleKeys = schedule.Next(3);
            var limit = ConcurrencyLimit.Partitioned(2, (int _) => ConcurrencyLimit.Fixed(1), new PartitionedLimitOptions { MaxIdleKeys = maxIdleKeys });
            var occupancy = new Occupancy(limit);
            var calls = Enumerable.Range(0, maxIdleKeys + 2).Select(key => new Settlement($"key {key}", 1 + schedule.Next(3))).ToArray();
            schedule.Describe = () => $"MaxIdleKeys {maxIdleKeys}, InFlight {limit.InFlight}, in use {occupancy.Current}; {string.Join("; ", calls.AsEnumerable())}";
            var tasks = new Task<int[]>[calls.Length];
            for (var key = 0; key < calls.Length; key++)
            {
                await Probe.PointsAsync(schedule, 2);
                var keyLimit = limit.ForKey(key);
                tasks[key] = calls[key].Items.FanOutAsync(Probe.Body(schedule, occupancy, calls[key], $"key {key}"), new FanOutOptions { Limit = keyLimit });
            }

            var results = await Task.WhenAll(tasks);
            for (var key = 0; key < calls.Length; key++)
            {
                Probe.AssertResults(results[key], calls[key]);
            }

            Probe.AssertQuiet(limit, occupancy);
        });

        output.WriteLine(exploration.Summary);
        Assert.True(exploration.Passed, exploration.Summary);
    }
}
