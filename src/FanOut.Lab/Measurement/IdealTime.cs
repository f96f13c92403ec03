using FanOut.Lab.Workloads;

namespace FanOut.Lab.Measurement;

/// <summary>The best time a case could take at its configured concurrency, from a stated model.</summary>
/// <remarks>
/// Two lower bounds, and the ideal is the larger:
/// <list type="bullet">
/// <item>Slots: at most D items run at once and an item holds its slot for its wait w plus its CPU time t, so with
/// equal items the best is ceil(N/D) x (w + t); with unequal waits the exact optimum is a scheduling problem, so the
/// model uses its lower bound max(longest w + t, (total w + N x t) / D), which is the longest item when D >= N.</item>
/// <item>Cores: the measured sequential CPU time N x t cannot run faster than on min(cores, D) cores.</item>
/// </list>
/// Waiting work (t = 0) gets the waves-times-delay model; CPU work the cores bound; mixed work (seed 004) both. The
/// lab issue said "mixed: the larger of the wait and CPU bounds", which misses that an item keeps its slot while it
/// computes: with D = 2 and 1 ms waits that model called a perfectly throttled run 23% efficient.
/// Efficiency = ideal / measured: near 1 means "as fast as this concurrency allows" (slow because throttled);
/// far below 1 means the runtime got in the way (slow because starved, serialised or queued).
/// </remarks>
public static class IdealTime
{
    /// <summary>The ideal milliseconds for <paramref name="itemCount"/> items at <paramref name="concurrency"/>.</summary>
    /// <param name="profile">What an item costs.</param>
    /// <param name="itemCount">N.</param>
    /// <param name="concurrency">D, the strategy's configured limit (N when unbounded).</param>
    /// <param name="cores">Processors available.</param>
    /// <param name="cpuMsPerItem">Measured CPU milliseconds of one item run alone; ignored when the profile uses no CPU.</param>
    public static double Milliseconds(WorkProfile profile, int itemCount, int concurrency, int cores, double cpuMsPerItem)
    {
        ArgumentNullException.ThrowIfNull(profile);
        ArgumentOutOfRangeException.ThrowIfNegative(itemCount);
        ArgumentOutOfRangeException.ThrowIfLessThan(cores, 1);
        if (itemCount == 0)
        {
            return 0;
        }

        var d = Math.Clamp(concurrency, 1, itemCount);
        var cpu = profile.UsesCpu ? cpuMsPerItem : 0;
        var waits = profile.Waits ? profile.WaitMs : [];
        var slots = SlotMilliseconds(waits, itemCount, d, cpu);
        var coresBound = itemCount * cpu / Math.Min(cores, d);
        return Math.Max(slots, coresBound);
    }

    /// <summary>The slots bound: exact for equal items, a lower bound otherwise.</summary>
    /// <param name="waitMs">Per-item waits; empty when items never wait.</param>
    /// <param name="itemCount">N.</param>
    /// <param name="concurrency">D.</param>
    /// <param name="cpuMsPerItem">t, added to every item's time in its slot.</param>
    public static double SlotMilliseconds(IReadOnlyList<int> waitMs, int itemCount, int concurrency, double cpuMsPerItem = 0)
    {
        ArgumentNullException.ThrowIfNull(waitMs);
        if (itemCount == 0)
        {
            return 0;
        }

        var d = Math.Clamp(concurrency, 1, itemCount);
        double total = 0, min = double.MaxValue, max = 0;
        for (var i = 0; i < itemCount; i++)
        {
            var item = (i < waitMs.Count ? waitMs[i] : 0) + cpuMsPerItem;
            total += item;
            min = Math.Min(min, item);
            max = Math.Max(max, item);
        }

        if (min == max)
        {
            return (double)((itemCount + d - 1) / d) * max;
        }

        return Math.Max(max, total / d);
    }

    /// <summary>ideal / measured, or NaN when nothing was measured.</summary>
    public static double Efficiency(double idealMs, double measuredMs) =>
        measuredMs > 0 ? idealMs / measuredMs : double.NaN;
}
