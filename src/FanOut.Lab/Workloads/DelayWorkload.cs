namespace FanOut.Lab.Workloads;

/// <summary>Asynchronous I/O stand-in: <c>await Task.Delay(ms)</c> per item (seeds 000, 001, 002, 003).</summary>
public sealed class DelayWorkload(DelaySchedule schedule) : WaitWorkload(schedule)
{
    /// <inheritdoc/>
    public override string Name => $"Task.Delay({Schedule.Text})";

    /// <inheritdoc/>
    /// <remarks>No synchronous form: Parallel.ForEach over an async body would be async void. The blocking
    /// shape the seeds show is <see cref="SyncOverAsyncWorkload"/> or <see cref="SleepWorkload"/>.</remarks>
    public override WorkloadForms Forms => WorkloadForms.Asynchronous;

    /// <inheritdoc/>
    public override async ValueTask RunAsync(int index, CancellationToken cancellationToken)
    {
        using var scope = Probe.Enter();
        await Task.Delay(Schedule[index], cancellationToken).ConfigureAwait(false);
    }
}
