using FanOut.Lab.Strategies;
using FanOut.Lab.Tests.Workloads;

namespace FanOut.Lab.Tests.Strategies;

/// <summary>The contract every strategy keeps: each item exactly once, never more in flight than its limit, and its limit reached.</summary>
[Collection(SequentialCollection.Name)]
public abstract class StrategyContractTests
{
    protected const int ItemCount = 24;

    /// <summary>The strategy under test.</summary>
    protected abstract Strategy CreateStrategy();

    /// <summary>The in-flight count the strategy must reach over <see cref="ItemCount"/> items of 20 ms.</summary>
    protected abstract int ExpectedPeak { get; }

    [Fact]
    public async Task RunAsync_ManyItems_RunsEachItemExactlyOnce()
    {
        var workload = new RecordingWorkload(ItemCount, waitMs: 2);
        await CreateStrategy().RunAsync(workload, Enumerable.Range(0, ItemCount).ToArray(), CancellationToken.None);
        Assert.All(workload.Runs, runs => Assert.Equal(1, runs));
        Assert.Equal(ItemCount, workload.Probe.Started);
        Assert.Equal(0, workload.Probe.Current);
    }

    [Fact]
    public async Task RunAsync_WaitingItems_ReachesButNeverExceedsItsLimit()
    {
        var strategy = CreateStrategy();
        var workload = new RecordingWorkload(ItemCount, waitMs: 20);
        await strategy.RunAsync(workload, Enumerable.Range(0, ItemCount).ToArray(), CancellationToken.None);
        Assert.True(workload.Probe.Peak <= strategy.ConcurrencyFor(ItemCount), $"peak {workload.Probe.Peak} exceeds the limit {strategy.ConcurrencyFor(ItemCount)}");
        Assert.Equal(ExpectedPeak, workload.Probe.Peak);
    }
}

public sealed class SequentialAwaitStrategyTests : StrategyContractTests
{
    protected override Strategy CreateStrategy() => new SequentialAwaitStrategy();

    protected override int ExpectedPeak => 1;
}

public sealed class SynchronousLoopStrategyTests : StrategyContractTests
{
    protected override Strategy CreateStrategy() => new SynchronousLoopStrategy();

    protected override int ExpectedPeak => 1;
}

public sealed class WhenAllStrategyTests : StrategyContractTests
{
    protected override Strategy CreateStrategy() => new WhenAllStrategy();

    protected override int ExpectedPeak => ItemCount;
}

public sealed class TaskRunWhenAllStrategyTests : StrategyContractTests
{
    protected override Strategy CreateStrategy() => new TaskRunWhenAllStrategy();

    protected override int ExpectedPeak => ItemCount;
}

public sealed class ValueTaskProjectionStrategyTests : StrategyContractTests
{
    protected override Strategy CreateStrategy() => new ValueTaskProjectionStrategy();

    protected override int ExpectedPeak => ItemCount;
}

public sealed class ChannelAllWritersStrategyTests : StrategyContractTests
{
    protected override Strategy CreateStrategy() => new ChannelAllWritersStrategy();

    protected override int ExpectedPeak => ItemCount;
}

public sealed class ParallelForEachAsyncFixedStrategyTests : StrategyContractTests
{
    protected override Strategy CreateStrategy() => new ParallelForEachAsyncStrategy(5);

    protected override int ExpectedPeak => 5;
}

public sealed class ParallelForEachAsyncDefaultStrategyTests : StrategyContractTests
{
    protected override Strategy CreateStrategy() => new ParallelForEachAsyncStrategy();

    protected override int ExpectedPeak => Math.Min(ItemCount, Environment.ProcessorCount);
}

public sealed class SemaphoreSlimWhenAllStrategyTests : StrategyContractTests
{
    protected override Strategy CreateStrategy() => new SemaphoreSlimWhenAllStrategy(5);

    protected override int ExpectedPeak => 5;
}

public sealed class ChannelWorkersStrategyTests : StrategyContractTests
{
    protected override Strategy CreateStrategy() => new ChannelWorkersStrategy(5);

    protected override int ExpectedPeak => 5;
}

public sealed class ActionBlockStrategyTests : StrategyContractTests
{
    protected override Strategy CreateStrategy() => new ActionBlockStrategy(5);

    protected override int ExpectedPeak => 5;
}

/// <summary>Blocking strategies get a limit of 2: the caller plus the pool's minimum threads cover it without waiting for thread injection.</summary>
public sealed class ParallelForEachFixedStrategyTests : StrategyContractTests
{
    protected override Strategy CreateStrategy() => new ParallelForEachStrategy(2);

    protected override int ExpectedPeak => 2;
}

public sealed class ParallelForFixedStrategyTests : StrategyContractTests
{
    protected override Strategy CreateStrategy() => new ParallelForStrategy(2);

    protected override int ExpectedPeak => 2;
}

public sealed class FanOutFixedStrategyTests : StrategyContractTests
{
    protected override Strategy CreateStrategy() => FanOutStrategy.Fixed(5);

    protected override int ExpectedPeak => 5;
}
