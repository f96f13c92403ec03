using FanOut.Lab.Measurement;
using FanOut.Lab.Results;
using FanOut.Lab.Scenarios;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Running;

/// <summary>
/// Turns a case's measured runs into its <see cref="CaseResult"/>: statistics of the times, means of the other measures
/// (CPU time, bytes, rates, latencies), and the counts (items, threads, limits, failures) of the median run, so every count
/// is a whole number that one run really had, and the counts of a row agree with each other and with its timeline.
/// </summary>
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
        var median = MedianRun(runs);
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
            PeakInFlight = median.PeakInFlight,
            ItemsStarted = median.ItemsStarted,
            ThreadPoolThreadsStart = median.ThreadPoolThreadsStart,
            ThreadPoolThreadsPeak = median.ThreadPoolThreadsPeak,
            ThreadPoolThreadsEnd = median.ThreadPoolThreadsEnd,
            ProcessThreadsStart = median.ProcessThreadsStart,
            ProcessThreadsPeak = median.ProcessThreadsPeak,
            ProcessThreadsEnd = median.ProcessThreadsEnd,
            PeakQueueLength = median.PeakQueueLength,
            CompletedWorkItems = median.CompletedWorkItems,
            LockContentions = median.LockContentions,
            AllocatedBytes = Mean(r => r.AllocatedBytes),
            Gen0 = median.Gen0,
            Gen1 = median.Gen1,
            Gen2 = median.Gen2,
            CpuTimeMs = Mean(r => r.CpuTimeMs),
            Io = IoResult.Of(runs.Select(r => r.Io).ToArray(), median.Io),
            Heartbeat = HeartbeatResult.Of(runs.Select(r => r.Heartbeat).ToArray()),
            Outcome = Outcomes.OutcomeResult.Of(runs.Select(r => r.Outcome).ToArray(), median.Outcome),
            LimitFinal = median.Limit?.Final,
            LimitPeak = median.Limit?.Peak,
            SeedSays = labCase.SeedSays,
            Timeline = median.Timeline,
        };
    }

    /// <summary>The run whose time is the median (the lower one of the middle two): the run a timeline shows.</summary>
    public static RunMetrics MedianRun(IReadOnlyList<RunMetrics> runs)
    {
        ArgumentNullException.ThrowIfNull(runs);
        return runs.OrderBy(r => r.ElapsedMs).ElementAt((runs.Count - 1) / 2);
    }
}
