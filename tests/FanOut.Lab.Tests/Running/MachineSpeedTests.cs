using FanOut.Lab.Running;

namespace FanOut.Lab.Tests.Running;

public sealed class MachineSpeedTests
{
    [Theory]
    [InlineData(MachineSpeed.ReferenceLoopMs, 1.0)]
    [InlineData(MachineSpeed.ReferenceLoopMs * 1.5, 1.5)]
    [InlineData(MachineSpeed.ReferenceLoopMs * 0.6, 0.6)]
    public void Slowdown_IsTheLoopsRatioToTheReference(double loopMs, double expected)
        => Assert.Equal(expected, MachineSpeed.Slowdown(loopMs), 9);

    [Theory]
    [InlineData(MachineSpeed.ReferenceLoopMs * 100, MachineSpeed.MaxSlowdown)]  // a stall while timing says little about the run
    [InlineData(MachineSpeed.ReferenceLoopMs / 100, MachineSpeed.MinSlowdown)]
    [InlineData(0, 1.0)]
    [InlineData(double.NaN, 1.0)]
    [InlineData(double.PositiveInfinity, 1.0)]
    public void Slowdown_StaysWithinItsRange(double loopMs, double expected)
        => Assert.Equal(expected, MachineSpeed.Slowdown(loopMs), 9);

    [Fact]
    public void Measure_ReturnsASlowdownWithinItsRange()
        => Assert.InRange(MachineSpeed.Measure(), MachineSpeed.MinSlowdown, MachineSpeed.MaxSlowdown);
}
