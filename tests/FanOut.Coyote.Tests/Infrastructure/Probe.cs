namespace FanOut.Coyote.Tests.Infrastructure;

/// <summary>Bodies that check the invariants as they run, and the checks every scenario ends with.</summary>
public static class Probe
{
    /// <summary>A body that enters <paramref name="occupancy"/>, takes a few scheduling points, and settles its item.</summary>
    public static Func<int, CancellationToken, ValueTask<int>> Body(Schedule schedule, Occupancy occupancy, Settlement settlement, string call) =>
        async (item, _) =>
        {
            settlement.Started(item);
            occupancy.Enter($"body of {call}");
            try
            {
                for (var i = schedule.Next(3); i >= 0; i--)
                {
                    await schedule.PointAsync();
                }
            }
            finally
            {
                occupancy.Exit();
                settlement.Settled(item);
            }

            return item;
        };

    /// <summary>The results of a call that ran to completion: every item once, in order.</summary>
    public static void AssertResults(int[] results, Settlement settlement)
    {
        settlement.AssertEachOnce();
        if (!results.SequenceEqual(settlement.Items))
        {
            throw new InvariantException($"results [{string.Join(',', results)}] are not the items in order");
        }
    }

    /// <summary>The results of calls that ran to completion, each call's: every item once, in order.</summary>
    public static void AssertResults(int[][] results, Settlement[] settlements)
    {
        for (var i = 0; i < settlements.Length; i++)
        {
            AssertResults(results[i], settlements[i]);
        }
    }

    /// <summary>Holds a permit taken outside a call (it enters <paramref name="occupancy"/> as <paramref name="holder"/>) for one to three scheduling points.</summary>
    public static async ValueTask HoldAsync(Schedule schedule, Occupancy occupancy, string holder)
    {
        occupancy.Enter(holder);
        await PointsAsync(schedule, 3);
        occupancy.Exit();
    }

    /// <summary>The end of a schedule: no violation seen, and every permit back.</summary>
    public static void AssertQuiet(ConcurrencyLimit limit, Occupancy occupancy)
    {
        occupancy.ThrowIfViolated();
        if (limit.InFlight != 0)
        {
            throw new InvariantException($"InFlight is {limit.InFlight} after every call, holder and lease ended (a permit leaked)");
        }
    }

    /// <summary>An async sequence of <paramref name="items"/> that takes a scheduling point before each (a lazy source).</summary>
    public static async IAsyncEnumerable<int> Lazy(int[] items, Schedule schedule)
    {
        foreach (var item in items)
        {
            await schedule.PointAsync();
            yield return item;
        }
    }

    /// <summary>Scheduling points, one to <paramref name="most"/> of them.</summary>
    public static async ValueTask PointsAsync(Schedule schedule, int most)
    {
        for (var i = schedule.Next(most) + 1; i > 0; i--)
        {
            await schedule.PointAsync();
        }
    }
}
