namespace FanOut.Lab.Workloads;

/// <summary>Seed 004's CPU work without I/O: <c>sum += i</c> for i below WorkCount, per item.</summary>
public sealed class SumLoopWorkload : Workload
{
    private readonly int _workCount;

    /// <summary>Creates the loop with <paramref name="workCount"/> iterations per item.</summary>
    public SumLoopWorkload(int workCount)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(workCount);
        _workCount = workCount;
    }

    /// <inheritdoc/>
    public override string Name => $"sum += i x {_workCount:N0}";

    /// <inheritdoc/>
    public override IReadOnlyDictionary<string, object> Parameters => new Dictionary<string, object> { ["workCount"] = _workCount };

    /// <inheritdoc/>
    public override WorkloadForms Forms => WorkloadForms.Both;

    /// <inheritdoc/>
    public override WorkProfile Profile => WorkProfile.Cpu;

    /// <inheritdoc/>
    public override ValueTask RunAsync(int index, CancellationToken cancellationToken)
    {
        Run(index);
        return ValueTask.CompletedTask;
    }

    /// <inheritdoc/>
    public override void Run(int index)
    {
        using var scope = Probe.Enter();
        CpuSink.Keep(Sum(_workCount));
    }

    /// <summary>The seed's loop, shared with <see cref="MixedWorkload"/> and the overhead benchmark.</summary>
    public static long Sum(int workCount)
    {
        long sum = 0;
        for (var i = 0; i < workCount; i++)
        {
            sum += i;
        }

        return sum;
    }
}
