using System.Runtime.CompilerServices;

namespace FanOut.Lab.Workloads;

/// <summary>Seed 004's CPU work without I/O: <c>sum += i</c> for i below WorkCount, per item.</summary>
public sealed class SumLoopWorkload(int workCount) : CpuLoopWorkload(workCount)
{
    /// <inheritdoc/>
    public override string Name => $"sum += i x {Iterations:N0}";

    /// <inheritdoc/>
    public override IReadOnlyDictionary<string, object> Parameters => new Dictionary<string, object> { ["workCount"] = Iterations };

    /// <summary>The seed's loop, shared with <see cref="MixedWorkload"/> and the overhead benchmark.</summary>
    /// <remarks>Never inlined: the measured runs and the CPU calibration then execute the same machine code. Inlined into
    /// different callers, the loop was laid out differently and calibrated ~13% slower than it ran (efficiency 1.13).</remarks>
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static long Sum(int workCount)
    {
        long sum = 0;
        for (var i = 0; i < workCount; i++)
        {
            sum += i;
        }

        return sum;
    }

    /// <inheritdoc/>
    protected override void Compute() => CpuSink.Keep(Sum(Iterations));
}
