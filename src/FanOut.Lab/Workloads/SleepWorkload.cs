namespace FanOut.Lab.Workloads;

/// <summary>Blocking wait: <c>Thread.Sleep(ms)</c> per item (seed 002's Parallel.For, seed 003's sync method).</summary>
/// <remarks>Its asynchronous form still blocks the calling thread and returns a completed task,
/// exactly as a synchronous method called from an async lambda would.</remarks>
public sealed class SleepWorkload(DelaySchedule schedule) : Workload
{
    /// <inheritdoc/>
    public override string Name => $"Thread.Sleep({schedule.Text})";

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
        Thread.Sleep(schedule[index]);
    }
}
