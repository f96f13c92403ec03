namespace FanOut.Lab.Workloads;

/// <summary>A workload whose items only wait, each for its time in a <see cref="DelaySchedule"/>.</summary>
public abstract class WaitWorkload(DelaySchedule schedule) : Workload
{
    /// <summary>The per-item waits.</summary>
    protected DelaySchedule Schedule => schedule;

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
    public override WorkProfile Profile => new(schedule.Milliseconds, UsesCpu: false);
}
