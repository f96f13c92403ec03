namespace FanOut.Lab.Workloads;

/// <summary>The anti-pattern of seed 000: a synchronous body that blocks on an async delay with <c>.GetAwaiter().GetResult()</c>.</summary>
/// <remarks>Each blocked item holds a pool thread while the delay's timer callback needs another pool
/// thread to complete it, which is why this starves the pool on a 2-core machine.</remarks>
public sealed class SyncOverAsyncWorkload(DelaySchedule schedule) : BlockingWaitWorkload(schedule)
{
    /// <inheritdoc/>
    public override string Name => $"Task.Delay({Schedule.Text}).Result";

    /// <inheritdoc/>
    protected override void Block(int milliseconds) => Task.Delay(milliseconds).GetAwaiter().GetResult();
}
