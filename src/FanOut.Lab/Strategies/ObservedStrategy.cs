using FanOut.Lab.Outcomes;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Strategies;

/// <summary>Runs another strategy as its caller would, and records what the call did around its first failure or the caller's cancellation.</summary>
/// <remarks>
/// The call's exception is caught and recorded (what <c>await</c> threw, what the task holds, its final state), not
/// thrown: a failing item is what these cases measure, not a failed case. After the call returns, the items it left
/// running are counted and then awaited, so the next run starts clean. Runs only <see cref="FailingWorkload"/>s.
/// </remarks>
/// <param name="inner">The strategy under observation.</param>
/// <param name="cancel">When the caller cancels, or null for a caller that never does.</param>
public sealed class ObservedStrategy(Strategy inner, CancelPlan? cancel = null) : Strategy
{
    /// <summary>How often the items a call left running are checked for their end.</summary>
    private static readonly TimeSpan s_drainPoll = TimeSpan.FromMilliseconds(1);

    private OutcomeRunMetrics? _last;

    /// <inheritdoc/>
    public override string Name => inner.Name;

    /// <inheritdoc/>
    public override WorkloadForms Needs => inner.Needs;

    /// <inheritdoc/>
    public override int ConcurrencyFor(int itemCount) => inner.ConcurrencyFor(itemCount);

    /// <inheritdoc/>
    public override double? PacePerSecond => inner.PacePerSecond;

    /// <inheritdoc/>
    /// <remarks>A run the caller cancels after a time ends then, or one wait later when the running bodies cannot stop early
    /// (they ignore the token, or block in a synchronous loop).</remarks>
    public override double EstimateRunMs(double runMs, Workload workload)
    {
        ArgumentNullException.ThrowIfNull(workload);
        if (cancel is not { AfterMs: > 0 } plan)
        {
            return inner.EstimateRunMs(runMs, workload);
        }

        var stopsAtOnce = workload is FailingWorkload { HonorsToken: true } && inner.Needs != WorkloadForms.Synchronous;
        return Math.Min(runMs, plan.AfterMs + (stopsAtOnce ? 0 : workload.Profile.WaitMs.DefaultIfEmpty(0).Max()));
    }

    /// <inheritdoc/>
    public override LimitReading? LastLimit => inner.LastLimit;

    /// <inheritdoc/>
    public override OutcomeRunMetrics? LastOutcome => _last;

    /// <inheritdoc/>
    public override async Task RunAsync(Workload workload, int[] items, CancellationToken cancellationToken)
    {
        var recorder = (workload as FailingWorkload)?.Outcomes
            ?? throw new ArgumentException($"{nameof(ObservedStrategy)} observes a {nameof(FailingWorkload)}, not {workload?.Name}.", nameof(workload));
        using var callerSource = cancel?.CreateSource() ?? new CancellationTokenSource();
        using var linked = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, callerSource.Token);

        // Registered after the link, so it runs first: cancellation callbacks run last-registered first.
        using var stamp = callerSource.Token.UnsafeRegister(static r => ((OutcomeRecorder)r!).Trigger(), recorder);
        recorder.Reset(cancel?.AtItem ?? -1, callerSource);

        Task? task = null;
        Exception? thrown = null;
        try
        {
            task = inner.RunAsync(workload, items, linked.Token);
            await task.ConfigureAwait(false);
        }
        catch (Exception e)
        {
            thrown = e;
        }

        var returnedAt = recorder.TimeProvider.GetTimestamp();
        var running = recorder.Running;
        cancellationToken.ThrowIfCancellationRequested();
        _last = recorder.Collect(returnedAt, running, CallOutcome.Of(thrown, task));

        // Everything started is awaited: the work a call left behind ends before the next run starts.
        while (recorder.Running > 0)
        {
            await Task.Delay(s_drainPoll, cancellationToken).ConfigureAwait(false);
        }
    }
}
