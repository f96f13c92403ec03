namespace FanOut.Lab.Workloads;

/// <summary>The anti-pattern of seed 000: a synchronous body that blocks on an async delay with <c>.GetAwaiter().GetResult()</c>.</summary>
/// <remarks>Each blocked item holds a pool thread while the delay's timer callback needs another pool
/// thread to complete it, which is why this starves the pool on a 2-core machine.</remarks>
public sealed class SyncOverAsyncWorkload(DelaySchedule schedule) : Workload
{
    /// <inheritdoc/>
    public override string Name => $"Task.Delay({schedule.Text}).Result";

    /// <inheritdoc/>
    public override IReadOnlyDictionary<string, object> Parameters
    {
        get
        {
            var parameters = new Dictionary<string, object>();
            schedule.Describe(parameters);
            return parameters;
        }
    }

    /// <inheritdoc/>
    public override WorkloadForms Forms => WorkloadForms.Both;

    /// <inheritdoc/>
    public override WorkProfile Profile => new(schedule.Milliseconds, UsesCpu: false);

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
        Task.Delay(schedule[index]).GetAwaiter().GetResult();
    }
}
