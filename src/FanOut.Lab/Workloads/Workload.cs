using FanOut.Lab.Measurement;

namespace FanOut.Lab.Workloads;

/// <summary>What one item does: the work the strategies fan out.</summary>
/// <remarks>
/// Each implementation enters <see cref="Probe"/> around exactly the item's work, inside its own
/// method, so counting in-flight items adds no allocation of its own (a wrapper async method would
/// add a state machine per item and distort the allocation column the seeds compare).
/// </remarks>
public abstract class Workload
{
    /// <summary>The probe every item enters while its work runs.</summary>
    public InFlightProbe Probe { get; } = new();

    /// <summary>A short display name with the parameters, e.g. <c>Task.Delay(20ms)</c>.</summary>
    public abstract string Name { get; }

    /// <summary>The parameters as they appear in results.json.</summary>
    public abstract IReadOnlyDictionary<string, object> Parameters { get; }

    /// <summary>Which bodies this workload offers.</summary>
    public abstract WorkloadForms Forms { get; }

    /// <summary>The cost model input for the ideal time.</summary>
    public abstract WorkProfile Profile { get; }

    /// <summary>Runs item <paramref name="index"/> as an asynchronous body.</summary>
    public virtual ValueTask RunAsync(int index, CancellationToken cancellationToken) =>
        throw new NotSupportedException($"{Name} has no asynchronous form.");

    /// <summary>Runs item <paramref name="index"/> as a synchronous body.</summary>
    public virtual void Run(int index) =>
        throw new NotSupportedException($"{Name} has no synchronous form.");

    /// <summary>Runs only the CPU part of item <paramref name="index"/>, synchronously and without waits, so the lab can time it alone.</summary>
    /// <remarks>Called only when <see cref="WorkProfile.UsesCpu"/> is true.</remarks>
    public virtual void RunCpuPart(int index) => Run(index);

    /// <summary>For the run's duration estimate only: how long one run takes at <paramref name="concurrency"/>, given the ideal time.</summary>
    /// <remarks>The ideal time, unless the workload knows better: a run that stops at its first failure, or waits on a real server
    /// whose latency the cost model does not hold.</remarks>
    public virtual double EstimateRunMs(double idealMs, int concurrency) => idealMs;

    /// <summary>For the run's duration estimate only: what the case's set-up and tear-down cost, once per case, in milliseconds.</summary>
    /// <value>400 ms for a workload with a set-up (<see cref="ICaseLifecycle"/>: a server's start, the connection pool's warm-up, the
    /// stop; measured on the 2-core VM, downstream-capacity cases of ~80 ms runs took ~1.4 s each), else 0.</value>
    public virtual double EstimateSetupMs => this is ICaseLifecycle ? 400 : 0;
}
