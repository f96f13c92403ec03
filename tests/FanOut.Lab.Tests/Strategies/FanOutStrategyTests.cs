using FanOut.Lab.Strategies;
using FanOut.Lab.Tests.Workloads;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Tests.Strategies;

public sealed class FanOutStrategyTests
{
    private static readonly int[] s_items = Enumerable.Range(0, 40).ToArray();

    [Fact]
    public async Task RunAsync_Adaptive_RunsEveryItemOnceAndReportsWhereTheLimitStood()
    {
        var strategy = FanOutStrategy.Adaptive();
        var workload = new RecordingWorkload(s_items.Length, waitMs: 2);
        await strategy.RunAsync(workload, s_items, CancellationToken.None);
        Assert.All(workload.Runs, runs => Assert.Equal(1, runs));
        var reading = Assert.IsType<LimitReading>(strategy.LastLimit);
        Assert.InRange(reading.Final, 1, reading.Peak);
        Assert.True(workload.Probe.Peak <= reading.Peak, $"in flight {workload.Probe.Peak} above the limit's peak {reading.Peak}");
    }

    [Fact]
    public async Task PrepareRun_AfterARunThatClimbed_LimitNowIsTheFreshLimitsStart()
    {
        var strategy = FanOutStrategy.Adaptive();
        await strategy.RunAsync(new RecordingWorkload(400, waitMs: 1), Enumerable.Range(0, 400).ToArray(), CancellationToken.None);
        Assert.True(strategy.LastLimit!.Peak > 2, $"the first run never climbed (peak {strategy.LastLimit.Peak}): the test would prove nothing");

        strategy.PrepareRun();

        Assert.Equal(new AdaptiveLimitOptions().InitialLimit, strategy.LimitNow);
    }

    [Fact]
    public void PrepareRun_Adaptive_NamesEachRunsLimitApart()
    {
        var strategy = FanOutStrategy.Adaptive();
        var runAll = FanOutRunAllStrategy.Default();

        strategy.PrepareRun();
        runAll.PrepareRun();
        var first = strategy.LimitName;
        strategy.PrepareRun();

        Assert.StartsWith(LimitNames.Prefix, first, StringComparison.Ordinal);
        Assert.StartsWith(LimitNames.Prefix, runAll.LimitName, StringComparison.Ordinal);
        Assert.NotEqual(first, strategy.LimitName);
        Assert.NotEqual(first, runAll.LimitName);
        var fixedLimit = FanOutStrategy.Fixed(3);
        fixedLimit.PrepareRun();
        Assert.Null(fixedLimit.LimitName);
    }

    [Fact]
    public async Task RunAsync_RunAll_WorkloadThatEnded_TakesNoMoreItems()
    {
        // An incident's script is over: an item run after it would return at once, and an adaptive limit would read it as an
        // answer in no time (the lab's long-low phase ended at 50 where its script left 31).
        var workload = new EndingWorkload(itemCount: 400, endAfterStarts: 8);
        await FanOutRunAllStrategy.Fixed(4).RunAsync(workload, Enumerable.Range(0, 400).ToArray(), CancellationToken.None);

        Assert.InRange(workload.Started, 8, 8 + 4);
    }

    private sealed class EndingWorkload(int itemCount, int endAfterStarts) : Workload, IEndsEarly
    {
        private int _started;

        public int Started => Volatile.Read(ref _started);

        public bool Ended => Started >= endAfterStarts;

        public override string Name => "ending";

        public override IReadOnlyDictionary<string, object> Parameters => new Dictionary<string, object>();

        public override WorkloadForms Forms => WorkloadForms.Asynchronous;

        public override WorkProfile Profile => new(Enumerable.Repeat(1, itemCount).ToArray(), UsesCpu: false);

        public override async ValueTask RunAsync(int index, CancellationToken cancellationToken)
        {
            Interlocked.Increment(ref _started);
            await Task.Delay(1, cancellationToken);
        }
    }

    [Fact]
    public void LastLimit_Fixed_IsNull()
    {
        Assert.Null(FanOutStrategy.Fixed(3).LastLimit);
    }

    [Fact]
    public async Task RunAsync_RunAllWithThrowingItems_RunsEveryItemAndDoesNotThrow()
    {
        var workload = new EveryThirdThrows(s_items.Length);
        await FanOutStrategy.Adaptive(ErrorMode.RunAll).RunAsync(workload, s_items, CancellationToken.None);
        Assert.Equal(s_items.Length, workload.Probe.Started);
    }

    [Fact]
    public async Task RunAsync_FailFastWithThrowingItems_Throws()
    {
        var workload = new EveryThirdThrows(s_items.Length);
        await Assert.ThrowsAsync<InvalidOperationException>(() => FanOutStrategy.Adaptive().RunAsync(workload, s_items, CancellationToken.None));
    }

    [Fact]
    public void Name_SaysLimitAndErrorMode()
    {
        Assert.Equal("FanOut (Fixed 50)", FanOutStrategy.Fixed(50).Name);
        Assert.Equal("FanOut (adaptive)", FanOutStrategy.Adaptive().Name);
        Assert.Equal("FanOut (adaptive, RunAll)", FanOutStrategy.Adaptive(ErrorMode.RunAll).Name);
        Assert.Equal("FanOut (default, 429 thrown)", FanOutStrategy.Adaptive(variant: "429 thrown").Name);
        Assert.Equal("FanOut (Fixed 50, 500/s bucket)", FanOutStrategy.FixedWithRate(50, 500).Name);
    }

    [Fact]
    public async Task RunAsync_FixedWithRate_RunsEveryItemThroughTheBucket()
    {
        var ran = 0;
        var workload = new Counting(() => Interlocked.Increment(ref ran));
        await FanOutStrategy.FixedWithRate(4, 10_000).RunAsync(workload, s_items, CancellationToken.None);
        Assert.Equal(s_items.Length, ran);
    }

    private sealed class Counting(Action onItem) : Workload
    {
        public override string Name => "counting";

        public override IReadOnlyDictionary<string, object> Parameters => new Dictionary<string, object>();

        public override WorkloadForms Forms => WorkloadForms.Asynchronous;

        public override WorkProfile Profile => new([], UsesCpu: false);

        public override ValueTask RunAsync(int index, CancellationToken cancellationToken)
        {
            onItem();
            return ValueTask.CompletedTask;
        }
    }

    private sealed class EveryThirdThrows(int itemCount) : Workload
    {
        public override string Name => "every third throws";

        public override IReadOnlyDictionary<string, object> Parameters => new Dictionary<string, object>();

        public override WorkloadForms Forms => WorkloadForms.Asynchronous;

        public override WorkProfile Profile => new(Enumerable.Repeat(1, itemCount).ToArray(), UsesCpu: false);

        public override async ValueTask RunAsync(int index, CancellationToken cancellationToken)
        {
            using var scope = Probe.Enter();
            await Task.Delay(1, CancellationToken.None);
            if (index % 3 == 0)
            {
                throw new InvalidOperationException($"item {index}");
            }
        }
    }
}
