using System.Diagnostics;

using FanOut.Lab.Measurement;
using FanOut.Lab.Results;
using FanOut.Lab.Results.Columns;
using FanOut.Lab.Scenarios;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Running;

/// <summary>Runs one case in this process: warm-up, CPU calibration, measured runs, statistics.</summary>
/// <remarks>The thread pool is process-wide, so what one case did to it (threads injected by a blocking
/// strategy) carries into the next case run in the same process. <see cref="ChildProcessCaseRunner"/> is the
/// default; this runner is for quick looks and for the child itself.</remarks>
public sealed class InProcessCaseRunner(RunPolicy policy)
{
    /// <summary>The minimum time the CPU calibration spends, so per-item costs of microseconds are still resolved.</summary>
    private static readonly TimeSpan s_calibrationTime = TimeSpan.FromMilliseconds(20);

    /// <summary>The shortest calibration batch timed: long enough that timer resolution is noise.</summary>
    private static readonly TimeSpan s_minBatchTime = TimeSpan.FromMilliseconds(1);

    /// <summary>Runs <paramref name="labCase"/> and summarises its measured runs.</summary>
    public CaseResult Run(LabCase labCase, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(labCase);
        var workload = labCase.CreateWorkload();
        var parameters = CaseParameters.Of(labCase, workload);
        if (labCase.Strategy.Refusal(workload) is { } refusal)
        {
            return CaseResult.Failed(labCase.Strategy.Name, workload.Name, parameters, refusal, labCase.SeedSays);
        }

        var items = Enumerable.Range(0, labCase.ItemCount).ToArray();
        var runPolicy = policy.Tighter(labCase.Policy);
        var lifecycle = workload as ICaseLifecycle;
        try
        {
            lifecycle?.SetUpAsync(cancellationToken).GetAwaiter().GetResult();
            return Measure(labCase, workload, lifecycle, parameters, items, runPolicy, cancellationToken);
        }
        finally
        {
            // Always, also after a failed set-up or a cancelled run: stop the server, delete the files.
            lifecycle?.DisposeAsync().AsTask().GetAwaiter().GetResult();
        }
    }

    private static CaseResult Measure(
        LabCase labCase,
        Workload workload,
        ICaseLifecycle? lifecycle,
        IReadOnlyDictionary<string, object> parameters,
        int[] items,
        RunPolicy policy,
        CancellationToken cancellationToken)
    {
        using var heartbeat = new HeartbeatProbe();
        using var sampler = new RuntimeSampler(heartbeat: heartbeat);
        using var recorder = new RunRecorder(sampler, workload.Probe, TimelineSourcesFor(labCase, workload), heartbeat);
        var note = policy.Reason;

        // A case whose best possible run is already long is measured once, without a warm-up (JIT is noise next to it).
        var idealBeforeMs = IdealTime.Milliseconds(workload.Profile, labCase.ItemCount, labCase.Strategy.ConcurrencyFor(labCase.ItemCount), Environment.ProcessorCount, 0);
        if (note is null && policy.LongRun is { } longRun && idealBeforeMs >= longRun.TotalMilliseconds && policy.MaxRuns > 1)
        {
            policy = policy with { Warmups = 0, MinRuns = 1, MaxRuns = 1 };
            note = $"measured once, no warm-up: its best possible run takes {CellText.Time(idealBeforeMs)}";
        }

        var firstRunMs = double.NaN;
        for (var i = 0; i < policy.Warmups; i++)
        {
            lifecycle?.RunStarting();
            var started = Stopwatch.GetTimestamp();
            labCase.Strategy.RunAsync(workload, items, cancellationToken).GetAwaiter().GetResult();
            var elapsedMs = Stopwatch.GetElapsedTime(started).TotalMilliseconds;
            lifecycle?.RunFinished(elapsedMs);
            firstRunMs = i == 0 ? elapsedMs : firstRunMs;
        }

        // A warm-up that was long says the runs will be: one measured run, with the reason beside the row.
        if (note is null && policy.LongRun is { } slow && firstRunMs >= slow.TotalMilliseconds && policy.MaxRuns > 1)
        {
            policy = policy with { MinRuns = 1, MaxRuns = 1 };
            note = $"measured once: the warm-up run took {CellText.Time(firstRunMs)}";
        }

        var runs = new List<RunMetrics>();
        var times = new List<double>();
        while (policy.WantsAnotherRun(times))
        {
            cancellationToken.ThrowIfCancellationRequested();

            // Outside the timed window: resetting counters and server statistics is not the strategy's cost.
            lifecycle?.RunStarting();
            labCase.Strategy.PrepareRun();
            recorder.Start();
            labCase.Strategy.RunAsync(workload, items, cancellationToken).GetAwaiter().GetResult();
            var metrics = recorder.Stop() with { Limit = labCase.Strategy.LastLimit, Outcome = labCase.Strategy.LastOutcome };
            if (lifecycle is not null)
            {
                metrics = metrics with { Io = lifecycle.RunFinished(metrics.ElapsedMs) };
            }

            runs.Add(metrics);
            times.Add(metrics.ElapsedMs);
        }

        // Calibrated after the measured runs: by then the loop is at its final JIT tier, which a
        // calibration right after one warm-up is not (tier-0 code made items look 3x costlier).
        var cpuMsPerItem = workload.Profile.UsesCpu ? CalibrateCpuMs(workload, labCase.ItemCount) : 0;
        var concurrency = labCase.Strategy.ConcurrencyFor(labCase.ItemCount);
        var idealMs = IdealTime.Milliseconds(workload.Profile, labCase.ItemCount, concurrency, Environment.ProcessorCount, cpuMsPerItem);
        var result = CaseResultBuilder.Build(labCase, workload, parameters, runs, idealMs, concurrency, cpuMsPerItem);
        return result with { FirstRunMs = double.IsNaN(firstRunMs) ? runs[0].ElapsedMs : firstRunMs, Note = note };
    }

    /// <summary>What a timeline reads for this case: the strategy's moving limit and its decisions, and a real-I/O workload's live counters.</summary>
    private static TimelineSources TimelineSourcesFor(LabCase labCase, Workload workload)
    {
        var strategy = labCase.Strategy;
        var live = workload as ILiveCounters;
        return new TimelineSources(
            strategy.LimitMoves ? () => strategy.LimitNow : null,
            live is null ? null : () => live.CompletedNow,
            live?.RejectedNow is null ? null : () => live.RejectedNow,
            live?.ServerInFlightNow is null ? null : () => live.ServerInFlightNow,
            strategy.LimitMoves ? () => strategy.LimitName : null);
    }

    /// <summary>Times the CPU part of items run one after another on this thread; returns milliseconds per item.</summary>
    /// <remarks>Items run in batches of at least <see cref="s_minBatchTime"/>, so microsecond items are resolved, and the
    /// fastest batch wins: the best case is the cost of the work itself, while slower batches measured interruptions.</remarks>
    private static double CalibrateCpuMs(Workload workload, int itemCount)
    {
        var batch = 1;
        var index = 0;
        var best = double.MaxValue;
        var batches = 0;
        var started = Stopwatch.GetTimestamp();
        while (batches < 5 || Stopwatch.GetElapsedTime(started) < s_calibrationTime)
        {
            var batchStart = Stopwatch.GetTimestamp();
            for (var i = 0; i < batch; i++)
            {
                workload.RunCpuPart(index++ % Math.Max(1, itemCount));
            }

            var elapsed = Stopwatch.GetElapsedTime(batchStart);
            if (elapsed < s_minBatchTime)
            {
                // Too short to time well: grow the batch and start over.
                batch *= 2;
                continue;
            }

            best = Math.Min(best, elapsed.TotalMilliseconds / batch);
            batches++;
        }

        return best;
    }
}
