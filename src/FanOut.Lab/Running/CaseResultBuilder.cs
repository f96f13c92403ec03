using FanOut.Lab.Measurement;
using FanOut.Lab.Results;
using FanOut.Lab.Scenarios;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Running;

/// <summary>Turns a case's measured runs into its <see cref="CaseResult"/>: statistics of the times, means of the rest.</summary>
public static class CaseResultBuilder
{
    /// <summary>Builds the result; <paramref name="runs"/> must not be empty.</summary>
    public static CaseResult Build(
        LabCase labCase,
        Workload workload,
        IReadOnlyDictionary<string, object> parameters,
        IReadOnlyList<RunMetrics> runs,
        double idealMs,
        int concurrency,
        double cpuMsPerItem)
    {
        ArgumentNullException.ThrowIfNull(labCase);
        ArgumentNullException.ThrowIfNull(workload);
        ArgumentNullException.ThrowIfNull(runs);
        var times = Summary.Of(runs.Select(r => r.ElapsedMs).ToArray());
        double Mean(Func<RunMetrics, double> metric) => runs.Average(metric);
        return new CaseResult
        {
            Strategy = labCase.Strategy.Name,
            Workload = workload.Name,
            Parameters = parameters,
            Runs = times.Count,
            MeanMs = times.Mean,
            ErrorMs = double.IsNaN(times.Error) ? null : times.Error,
            StdDevMs = times.StdDev,
            MedianMs = times.Median,
            MinMs = times.Min,
            MaxMs = times.Max,
            IdealMs = idealMs,
            Efficiency = IdealTime.Efficiency(idealMs, times.Mean),
            Concurrency = concurrency,
            CpuMsPerItem = cpuMsPerItem,
            PeakInFlight = Mean(r => r.PeakInFlight),
            ItemsStarted = Mean(r => r.ItemsStarted),
            ThreadPoolThreadsStart = Mean(r => r.ThreadPoolThreadsStart),
            ThreadPoolThreadsPeak = Mean(r => r.ThreadPoolThreadsPeak),
            ThreadPoolThreadsEnd = Mean(r => r.ThreadPoolThreadsEnd),
            ProcessThreadsStart = Mean(r => r.ProcessThreadsStart),
            ProcessThreadsPeak = Mean(r => r.ProcessThreadsPeak),
            ProcessThreadsEnd = Mean(r => r.ProcessThreadsEnd),
            PeakQueueLength = Mean(r => r.PeakQueueLength),
            CompletedWorkItems = Mean(r => r.CompletedWorkItems),
            LockContentions = Mean(r => r.LockContentions),
            AllocatedBytes = Mean(r => r.AllocatedBytes),
            Gen0 = Mean(r => r.Gen0),
            Gen1 = Mean(r => r.Gen1),
            Gen2 = Mean(r => r.Gen2),
            CpuTimeMs = Mean(r => r.CpuTimeMs),
            Io = IoResult.Of(runs.Select(r => r.Io).ToArray()),
            Heartbeat = HeartbeatResult.Of(runs.Select(r => r.Heartbeat).ToArray()),
            Outcome = Outcomes.OutcomeResult.Of(runs.Select(r => r.Outcome).ToArray()),
            LimitFinal = runs.All(r => r.Limit is not null) ? runs.Average(r => r.Limit!.Final) : null,
            LimitPeak = runs.All(r => r.Limit is not null) ? runs.Average(r => r.Limit!.Peak) : null,
            SeedSays = labCase.SeedSays,
            Timeline = MedianRun(runs).Timeline,
        };
    }

    /// <summary>The run whose time is the median (the lower one of the middle two): the run a timeline shows.</summary>
    public static RunMetrics MedianRun(IReadOnlyList<RunMetrics> runs)
    {
        ArgumentNullException.ThrowIfNull(runs);
        return runs.OrderBy(r => r.ElapsedMs).ElementAt((runs.Count - 1) / 2);
    }
}
