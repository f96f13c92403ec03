using FanOut.Lab.Workloads;

namespace FanOut.Lab.Strategies;

/// <summary>How items are fanned out: one API used one way. Add a strategy by adding one subclass.</summary>
public abstract class Strategy
{
    /// <summary>The display name, with its limit: <c>Parallel.ForEachAsync (DOP 50)</c>.</summary>
    public abstract string Name { get; }

    /// <summary>The body shape the API takes.</summary>
    public abstract WorkloadForms Needs { get; }

    /// <summary>The most items the strategy lets run at once over <paramref name="itemCount"/> items, as configured; the ideal-time model's D.</summary>
    public abstract int ConcurrencyFor(int itemCount);

    /// <summary>For the run's duration estimate only: how long one run takes, given the workload's estimate <paramref name="runMs"/>.</summary>
    /// <param name="runMs">The workload's estimate of one run.</param>
    /// <param name="workload">The workload, for a strategy that stops the run early.</param>
    public virtual double EstimateRunMs(double runMs, Workload workload) => runMs;

    /// <summary>For the run's duration estimate only: the strategy's own pace in items per second (a rate limiter in front of
    /// its limit), or null when it sends as fast as its concurrency allows.</summary>
    public virtual double? PacePerSecond => null;

    /// <summary>Where the strategy's own limit stood after the last run, for strategies whose limit moves; null for the rest.</summary>
    public virtual LimitReading? LastLimit => null;

    /// <summary>The strategy's own limit right now, for a limit that moves during a run (FanOut adaptive); null otherwise.</summary>
    /// <remarks>Read by the timeline sampler every millisecond: must not allocate or block.</remarks>
    public virtual int? LimitNow => null;

    /// <summary>The name (<c>AdaptiveLimitOptions.Name</c>) of the adaptive limit <see cref="PrepareRun"/> made, which its
    /// changes are published under, so the timeline can record them with their reasons; null for a limit that has none.</summary>
    public virtual string? LimitName => null;

    /// <summary>True when the strategy's limit moves during a run (<see cref="LimitNow"/> is then worth recording).</summary>
    public virtual bool LimitMoves => false;

    /// <summary>Makes the next run's own state (a fresh limit) before the recorder's first sample, so that sample reads
    /// the run's start value, not where the previous run left off. The next <see cref="RunAsync"/> uses it.</summary>
    public virtual void PrepareRun()
    {
    }

    /// <summary>What the last run did around its first failure or the caller's cancellation, for observed strategies; null for the rest.</summary>
    public virtual Outcomes.OutcomeRunMetrics? LastOutcome => null;

    /// <summary>Runs every item of <paramref name="items"/> through <paramref name="workload"/>.</summary>
    public abstract Task RunAsync(Workload workload, int[] items, CancellationToken cancellationToken);

    /// <summary>Why this strategy cannot run <paramref name="workload"/> as the seeds write it, or null when it can.</summary>
    /// <remarks>An async body handed to Parallel.ForEach compiles to async void: exceptions escape and the loop
    /// ends before the work does. The lab refuses that pairing instead of measuring a broken program.</remarks>
    public string? Refusal(Workload workload)
    {
        ArgumentNullException.ThrowIfNull(workload);
        if ((workload.Forms & Needs) != 0)
        {
            return null;
        }

        return Needs == WorkloadForms.Synchronous
            ? $"{Name} takes a synchronous body and {workload.Name} is asynchronous; an async lambda there would be async void. Use a blocking workload (Thread.Sleep or .Result) to show that shape."
            : $"{Name} takes an asynchronous body and {workload.Name} has none.";
    }

    /// <inheritdoc/>
    public override string ToString() => Name;

    /// <summary>The text for an optional degree of parallelism: <c>default</c> or <c>DOP 4</c>.</summary>
    protected static string DopText(int? maxDegreeOfParallelism) =>
        maxDegreeOfParallelism is { } dop ? $"DOP {dop}" : "default";

    /// <summary>Checks a limit given to a strategy's constructor.</summary>
    protected static int CheckLimit(int limit, string paramName)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(limit, 1, paramName);
        return limit;
    }
}
