namespace FanOut.Lab.Workloads;

/// <summary>Seed 001's CPU work: <c>Math.Pow(i, 2)</c> for i below CalculationCount, per item.</summary>
public sealed class PowLoopWorkload(int calculationCount) : CpuLoopWorkload(calculationCount)
{
    /// <inheritdoc/>
    public override string Name => $"Math.Pow x {Iterations:N0}";

    /// <inheritdoc/>
    public override IReadOnlyDictionary<string, object> Parameters => new Dictionary<string, object> { ["calculationCount"] = Iterations };

    /// <inheritdoc/>
    protected override void Compute()
    {
        var acc = 0.0;
        for (var i = 0; i < Iterations; i++)
        {
            acc += Math.Pow(i, 2);
        }

        CpuSink.Keep(acc);
    }
}
