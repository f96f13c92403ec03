namespace FanOut.Lab.Workloads;

/// <summary>A CPU-only item that offers both forms; the asynchronous one runs synchronously, like the seeds'
/// lambdas that return <c>Task.CompletedTask</c> or <c>ValueTask.CompletedTask</c>.</summary>
public abstract class CpuLoopWorkload : Workload
{
    /// <summary>Creates the loop with <paramref name="iterations"/> per item.</summary>
    protected CpuLoopWorkload(int iterations)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(iterations);
        Iterations = iterations;
    }

    /// <summary>Loop iterations per item.</summary>
    protected int Iterations { get; }

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
        Compute();
    }

    /// <summary>The loop itself; it must leave its result in <see cref="CpuSink"/> so the JIT cannot drop it.</summary>
    protected abstract void Compute();
}
