namespace FanOut.Lab.Workloads;

/// <summary>A wait that holds its thread: the synchronous form blocks, and so does the asynchronous one, which
/// returns a completed task exactly as a synchronous method called from an async lambda would.</summary>
public abstract class BlockingWaitWorkload(DelaySchedule schedule) : WaitWorkload(schedule)
{
    /// <inheritdoc/>
    public override WorkloadForms Forms => WorkloadForms.Both;

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
        Block(Schedule[index]);
    }

    /// <summary>Blocks the calling thread for <paramref name="milliseconds"/>.</summary>
    protected abstract void Block(int milliseconds);
}
