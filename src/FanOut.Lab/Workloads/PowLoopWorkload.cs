namespace FanOut.Lab.Workloads;

/// <summary>Seed 001's CPU work: <c>Math.Pow(i, 2)</c> for i below CalculationCount, per item.</summary>
public sealed class PowLoopWorkload : Workload
{
    private readonly int _calculationCount;

    /// <summary>Creates the loop with <paramref name="calculationCount"/> iterations per item.</summary>
    public PowLoopWorkload(int calculationCount)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(calculationCount);
        _calculationCount = calculationCount;
    }

    /// <inheritdoc/>
    public override string Name => $"Math.Pow x {_calculationCount:N0}";

    /// <inheritdoc/>
    public override IReadOnlyDictionary<string, object> Parameters => new Dictionary<string, object> { ["calculationCount"] = _calculationCount };

    /// <inheritdoc/>
    public override WorkloadForms Forms => WorkloadForms.Both;

    /// <inheritdoc/>
    public override WorkProfile Profile => WorkProfile.Cpu;

    /// <inheritdoc/>
    /// <remarks>Synchronous, like the seed's lambda that returns <c>Task.CompletedTask</c>/<c>ValueTask.CompletedTask</c>.</remarks>
    public override ValueTask RunAsync(int index, CancellationToken cancellationToken)
    {
        Run(index);
        return ValueTask.CompletedTask;
    }

    /// <inheritdoc/>
    public override void Run(int index)
    {
        using var scope = Probe.Enter();
        var acc = 0.0;
        for (var i = 0; i < _calculationCount; i++)
        {
            acc += Math.Pow(i, 2);
        }

        CpuSink.Keep(acc);
    }
}
