using FanOut.Lab.Workloads;

namespace FanOut.Lab.Measurement;

/// <summary>The best time a case could take at its configured concurrency, from a stated model.</summary>
/// <remarks>
/// <list type="bullet">
/// <item>Waiting (I/O, sleeps, blocked calls): items are indivisible, so with D at once and equal waits w it is
/// ceil(N/D) x w; with unequal waits the exact optimum is a scheduling problem, so the model uses its lower
/// bound max(longest wait, total wait / D), which is the longest wait when D >= N.</item>
/// <item>CPU: the measured sequential CPU time N x t divided by min(cores, D).</item>
/// <item>Mixed: the larger of the two, since a perfect schedule overlaps one with the other.</item>
/// </list>
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
        var wait = profile.Waits ? WaitMilliseconds(profile.WaitMs, itemCount, d) : 0;
        var cpu = profile.UsesCpu ? itemCount * cpuMsPerItem / Math.Min(cores, d) : 0;
        return Math.Max(wait, cpu);
    }

    /// <summary>The waiting part of the model: exact for equal waits, a lower bound otherwise.</summary>
    public static double WaitMilliseconds(IReadOnlyList<int> waitMs, int itemCount, int concurrency)
    {
        ArgumentNullException.ThrowIfNull(waitMs);
        var n = Math.Min(itemCount, waitMs.Count);
        if (n == 0)
        {
            return 0;
        }

        var d = Math.Clamp(concurrency, 1, n);
        long total = 0;
        int min = int.MaxValue, max = 0;
        for (var i = 0; i < n; i++)
        {
            total += waitMs[i];
            min = Math.Min(min, waitMs[i]);
            max = Math.Max(max, waitMs[i]);
        }

        if (min == max)
        {
            return (double)((n + d - 1) / d) * max;
        }

        return Math.Max(max, (double)total / d);
    }

    /// <summary>ideal / measured, or NaN when nothing was measured.</summary>
    public static double Efficiency(double idealMs, double measuredMs) =>
        measuredMs > 0 ? idealMs / measuredMs : double.NaN;
}
