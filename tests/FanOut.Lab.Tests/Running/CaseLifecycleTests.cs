using FanOut.Lab.Measurement;
using FanOut.Lab.Running;
using FanOut.Lab.Scenarios;
using FanOut.Lab.Strategies;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Tests.Running;

/// <summary>The runner's side of <see cref="ICaseLifecycle"/>: set-up once, a reset and a collect around every run, tear-down always.</summary>
public sealed class CaseLifecycleTests
{
    [Fact]
    public void Run_LifecycleWorkload_CallsHooksInOrderAndCarriesIoMetricsIntoTheResult()
    {
        var workload = new LifecycleWorkload();
        var result = new InProcessCaseRunner(new RunPolicy(1, 2, 2, TimeSpan.Zero)).Run(new LabCase(new WhenAllStrategy(), () => workload, 3));

        Assert.True(result.Succeeded, result.Error);
        Assert.Equal(["setup", "start", "finish", "start", "finish", "start", "finish", "dispose"], workload.Calls);
        Assert.NotNull(result.Io);
        Assert.Equal(3, result.Io.Successes);
        Assert.Equal(1, result.Io.FailuresByStatus["429"]);
    }

    [Fact]
    public void Run_SetUpThrows_StillDisposes()
    {
        var workload = new LifecycleWorkload { FailSetUp = true };
        Assert.Throws<InvalidOperationException>(() => new InProcessCaseRunner(new RunPolicy(0, 1, 1, TimeSpan.Zero)).Run(new LabCase(new WhenAllStrategy(), () => workload, 3)));
        Assert.Equal(["setup", "dispose"], workload.Calls);
    }

    [Fact]
    public void Run_CaseHasItsOwnPolicy_RunnerUsesTheTighterOne()
    {
        var workload = new LifecycleWorkload();
        var result = new InProcessCaseRunner(new RunPolicy(1, 3, 3, TimeSpan.Zero)).Run(new LabCase(new WhenAllStrategy(), () => workload, 3, Policy: new RunPolicy(0, 1, 1, TimeSpan.Zero)));
        Assert.Equal(1, result.Runs);
        Assert.Equal(["setup", "start", "finish", "dispose"], workload.Calls);
    }

    [Fact]
    public void Run_SeedWorkload_HasNoIoResult()
    {
        var result = new InProcessCaseRunner(new RunPolicy(0, 1, 1, TimeSpan.Zero)).Run(new LabCase(new WhenAllStrategy(), () => new DelayWorkload(DelaySchedule.Fixed(1, 2)), 2));
        Assert.Null(result.Io);
    }

    private sealed class LifecycleWorkload : Workload, ICaseLifecycle
    {
        private int _done;

        public List<string> Calls { get; } = [];

        public bool FailSetUp { get; init; }

        public override string Name => "lifecycle";

        public override IReadOnlyDictionary<string, object> Parameters => new Dictionary<string, object>();

        public override WorkloadForms Forms => WorkloadForms.Asynchronous;

        public override WorkProfile Profile => new([], false);

        public Task SetUpAsync(CancellationToken cancellationToken)
        {
            Calls.Add("setup");
            return FailSetUp ? throw new InvalidOperationException("no server") : Task.CompletedTask;
        }

        public void RunStarting()
        {
            Calls.Add("start");
            _done = 0;
        }

        public IoRunMetrics RunFinished(double elapsedMs)
        {
            Calls.Add("finish");
            return new IoRunMetrics
            {
                Successes = _done,
                FailuresByStatus = new Dictionary<int, long> { [429] = 1 },
                FailuresSocket = 0,
                FailuresTimeout = 0,
                FailuresOther = 0,
                SuccessesPerSecond = 1,
            };
        }

        public ValueTask DisposeAsync()
        {
            Calls.Add("dispose");
            return ValueTask.CompletedTask;
        }

        public override async ValueTask RunAsync(int index, CancellationToken cancellationToken)
        {
            using var scope = Probe.Enter();
            await Task.Yield();
            Interlocked.Increment(ref _done);
        }
    }
}
