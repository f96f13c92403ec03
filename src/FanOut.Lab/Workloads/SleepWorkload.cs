namespace FanOut.Lab.Workloads;

/// <summary>Blocking wait: <c>Thread.Sleep(ms)</c> per item (seed 002's Parallel.For, seed 003's sync method).</summary>
public sealed class SleepWorkload(DelaySchedule schedule) : BlockingWaitWorkload(schedule)
{
    /// <inheritdoc/>
    public override string Name => $"Thread.Sleep({Schedule.Text})";

    /// <inheritdoc/>
    protected override void Block(int milliseconds) => Thread.Sleep(milliseconds);
}
