using FanOut.Lab.Measurement;
using FanOut.Lab.Outcomes;
using FanOut.Lab.Results.Columns;
using FanOut.Lab.Running;
using FanOut.Lab.Scenarios;
using FanOut.Lab.Strategies;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Tests.Running;

/// <summary>Issue 18 item 10: counts print as whole numbers, the median run's (not "41.7 of 100 started").</summary>
public sealed class CaseResultBuilderTests
{
    [Fact]
    public void Build_CountsAreTheMedianRunsAndTimesAreMeans()
    {
        // Three runs whose counts differ; the median run by time is the 20 ms one.
        var runs = new[] { Run(10, count: 41), Run(30, count: 43), Run(20, count: 42) };

        var result = Build(runs);

        Assert.Equal(20, result.MeanMs);
        Assert.Equal(42, result.PeakInFlight);
        Assert.Equal(42, result.ItemsStarted);
        Assert.Equal(42, result.ThreadPoolThreadsPeak);
        Assert.Equal(42, result.LimitFinal);
        Assert.Equal(84, result.LimitPeak);
        Assert.Equal(42, result.Io!.Successes);
        Assert.Equal(100 - 42, result.Io.Failures);
        Assert.Equal(100 - 42, result.Io.FailuresByStatus["429"]);
        Assert.Equal(42, result.Io.Rejected429);
        Assert.Equal((41 + 43 + 42) / 3.0 * 10, result.Io.SuccessesPerSecond, 9); // a rate stays a mean
        Assert.Equal(42, result.Outcome!.ItemsStarted);
        Assert.Equal(42 - 30, result.Outcome.StartedAfterTrigger);
        Assert.Equal(20, result.Outcome.StopMs); // a time stays a mean
    }

    [Fact]
    public void Build_EvenRuns_TakesTheLowerMiddleRunWhole()
    {
        var result = Build([Run(10, count: 41), Run(40, count: 44), Run(20, count: 42), Run(30, count: 43)]);

        Assert.Equal(42, result.Outcome!.ItemsStarted);
        Assert.Equal(42, result.Io!.Successes);
    }

    [Theory]
    [InlineData(41.7, "42")]
    [InlineData(369.8, "370")]
    [InlineData(214.1, "214")]
    [InlineData(1872, "1,872")]
    [InlineData(0.5, "1")]
    public void Count_IsAlwaysAWholeNumber(double value, string expected) => Assert.Equal(expected, CellText.Count(value));

    private static FanOut.Lab.Results.CaseResult Build(IReadOnlyList<RunMetrics> runs)
    {
        var labCase = new LabCase(new WhenAllStrategy(), () => new DelayWorkload(DelaySchedule.Fixed(1, 100)), 100);
        var workload = labCase.CreateWorkload();
        return CaseResultBuilder.Build(labCase, workload, CaseParameters.Of(labCase, workload), runs, idealMs: 1, concurrency: 100, cpuMsPerItem: 0);
    }

    private static RunMetrics Run(double elapsedMs, int count) => new()
    {
        ElapsedMs = elapsedMs,
        PeakInFlight = count,
        ItemsStarted = count,
        ThreadPoolThreadsStart = count,
        ThreadPoolThreadsPeak = count,
        ThreadPoolThreadsEnd = count,
        ProcessThreadsStart = count,
        ProcessThreadsPeak = count,
        ProcessThreadsEnd = count,
        PeakQueueLength = count,
        CompletedWorkItems = count,
        LockContentions = count,
        AllocatedBytes = count,
        Gen0 = count,
        Gen1 = 0,
        Gen2 = 0,
        CpuTimeMs = elapsedMs,
        Limit = new LimitReading(count, 2 * count),
        Io = new IoRunMetrics
        {
            Successes = count,
            FailuresByStatus = new Dictionary<int, long> { [429] = 100 - count },
            FailuresSocket = 0,
            FailuresTimeout = 0,
            FailuresOther = 0,
            SuccessesPerSecond = count * 10,
            Rejected429 = count,
        },
        Outcome = new OutcomeRunMetrics
        {
            ItemsStarted = count,
            StartedAfterTrigger = count - 30,
            Completed = count,
            Failed = 1,
            Canceled = 0,
            StopMs = elapsedMs,
            RunningAtReturn = 0,
            FinalState = "Faulted",
            Threw = "ItemFailedException",
            ExceptionsReachable = 1,
            CancellationsReachable = 0,
            FailuresReachable = 1,
            FailuresIndexedByApi = 0,
        },
    };
}
