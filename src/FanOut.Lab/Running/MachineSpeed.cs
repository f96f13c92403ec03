using System.Diagnostics;
using System.Runtime.CompilerServices;

using FanOut.Lab.Workloads;

namespace FanOut.Lab.Running;

/// <summary>How much slower (or faster) this machine runs single-threaded CPU work than the machine the duration estimate's
/// constants were measured on, timed once before a run.</summary>
/// <remarks>
/// A case's child start-up (runtime start, JIT, set-up) and a workload's set-up are CPU work: they took 0.26 s a case on one
/// 2-core VM (an AMD EPYC) and 0.39 s on another of the same kind (an Intel Xeon at 2.1 GHz), where the CPU-bound scenarios
/// took 1.5-1.7x longer too. The estimate's constants are measured on the slower one; <see cref="Slowdown"/> scales them to
/// the machine at hand, as the CPU parts of CPU-bound workloads are timed here already.
/// </remarks>
public static class MachineSpeed
{
    /// <summary>The reference loop's best time on the VM the constants were measured on (Intel Xeon, 2.1 GHz, 2 cores:
    /// 4.08-4.77 ms over six processes).</summary>
    public const double ReferenceLoopMs = 4.15;

    /// <summary>The range a measured slowdown is kept in: a machine 2x faster or 3x slower at most.</summary>
    public const double MinSlowdown = 0.5;

    /// <inheritdoc cref="MinSlowdown"/>
    public const double MaxSlowdown = 3;

    private const int Iterations = 2_000_000;
    private const int Trials = 7;

    /// <summary>Times the reference loop here (the best of <see cref="Trials"/>, about 30 ms in all) and returns the slowdown.</summary>
    public static double Measure()
    {
        ReferenceLoop();
        var best = double.MaxValue;
        for (var trial = 0; trial < Trials; trial++)
        {
            var started = Stopwatch.GetTimestamp();
            ReferenceLoop();
            best = Math.Min(best, Stopwatch.GetElapsedTime(started).TotalMilliseconds);
        }

        return Slowdown(best);
    }

    /// <summary>The slowdown for a reference loop that took <paramref name="loopMs"/>: its ratio to <see cref="ReferenceLoopMs"/>,
    /// kept within [<see cref="MinSlowdown"/>, <see cref="MaxSlowdown"/>] (a stall during the timing says little about the run).</summary>
    public static double Slowdown(double loopMs) =>
        double.IsFinite(loopMs) && loopMs > 0 ? Math.Clamp(loopMs / ReferenceLoopMs, MinSlowdown, MaxSlowdown) : 1;

    // Fully optimised from the first call, so the timing is the CPU's and not the JIT's tiers.
    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.AggressiveOptimization)]
    private static void ReferenceLoop()
    {
        var sum = 0.0;
        for (var i = 0; i < Iterations; i++)
        {
            sum += Math.Sqrt(i) * 1.0000001;
        }

        CpuSink.Keep(sum);
    }
}
