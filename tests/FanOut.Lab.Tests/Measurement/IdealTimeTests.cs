using FanOut.Lab.Measurement;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Tests.Measurement;

public sealed class IdealTimeTests
{
    private static WorkProfile Waits(params int[] ms) => new(ms, UsesCpu: false);

    [Theory]
    [InlineData(50, 200)]   // seed 000: ceil(500/50) waves x 20 ms
    [InlineData(500, 20)]   // unbounded: one wave
    [InlineData(2, 5000)]   // ForEachAsync default on 2 cores
    [InlineData(16, 640)]   // the seed's 16 cores: ceil(500/16) = 32 waves
    public void Milliseconds_FixedWaits_IsWavesTimesDelay(int concurrency, double expected)
    {
        var profile = Waits(Enumerable.Repeat(20, 500).ToArray());
        Assert.Equal(expected, IdealTime.Milliseconds(profile, 500, concurrency, cores: 2, cpuMsPerItem: 0));
    }

    [Fact]
    public void Milliseconds_UnequalWaitsUnbounded_IsLongestWait()
    {
        Assert.Equal(50, IdealTime.Milliseconds(Waits(10, 50, 30), 3, 3, 2, 0));
    }

    [Fact]
    public void Milliseconds_UnequalWaitsSequential_IsTotalWait()
    {
        Assert.Equal(90, IdealTime.Milliseconds(Waits(10, 50, 30), 3, 1, 2, 0));
    }

    [Fact]
    public void Milliseconds_UnequalWaitsBounded_IsLowerBoundOfTotalOverD()
    {
        // max(longest 50, total 120 / 2 = 60) = 60.
        Assert.Equal(60, IdealTime.Milliseconds(Waits(10, 50, 30, 30), 4, 2, 2, 0));
    }

    [Theory]
    [InlineData(10, 10)]  // min(cores 2, D 10) = 2: 10 x 2 ms / 2
    [InlineData(1, 20)]   // sequential
    public void Milliseconds_Cpu_IsSequentialCpuOverMinCoresAndD(int concurrency, double expected)
    {
        Assert.Equal(expected, IdealTime.Milliseconds(WorkProfile.Cpu, 10, concurrency, cores: 2, cpuMsPerItem: 2));
    }

    [Fact]
    public void Milliseconds_Mixed_IsTheLargerOfSlotsAndCores()
    {
        var profile = new WorkProfile(Enumerable.Repeat(3, 10).ToArray(), UsesCpu: true);
        Assert.Equal(25, IdealTime.Milliseconds(profile, 10, 10, cores: 2, cpuMsPerItem: 5));   // cores 50/2 = 25 > one slot round 3 + 5
        Assert.Equal(40, IdealTime.Milliseconds(profile, 10, 1, cores: 2, cpuMsPerItem: 1));    // one slot: 10 x (3 + 1) = 40 > cores 10
        Assert.Equal(20, IdealTime.Milliseconds(profile, 10, 2, cores: 2, cpuMsPerItem: 1));    // two slots: 5 x (3 + 1); wait-only model said 15
    }

    [Fact]
    public void Milliseconds_CpuItemsFewerSlotsThanItems_CountsWholeItems()
    {
        // 25 items of 1 ms on 2 slots: the slot that runs 13 items takes 13 ms, not 12.5.
        Assert.Equal(13, IdealTime.Milliseconds(WorkProfile.Cpu, 25, 2, cores: 2, cpuMsPerItem: 1));
    }

    [Fact]
    public void Efficiency_IsIdealOverMeasured()
    {
        Assert.Equal(0.5, IdealTime.Efficiency(100, 200));
    }
}
