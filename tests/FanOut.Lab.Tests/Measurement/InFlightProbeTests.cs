using FanOut.Lab.Measurement;

namespace FanOut.Lab.Tests.Measurement;

public sealed class InFlightProbeTests
{
    [Fact]
    public void Enter_NestedScopes_PeakIsMostAtOnce()
    {
        var probe = new InFlightProbe();
        using (probe.Enter())
        {
            using (probe.Enter())
            {
                Assert.Equal(2, probe.Current);
            }

            using (probe.Enter())
            {
            }
        }

        Assert.Equal(0, probe.Current);
        Assert.Equal(2, probe.Peak);
        Assert.Equal(3, probe.Started);
    }

    [Fact]
    public void Enter_ManyThreads_NoLostUpdates()
    {
        var probe = new InFlightProbe();
        Parallel.For(0, 10_000, _ =>
        {
            using var scope = probe.Enter();
        });
        Assert.Equal(10_000, probe.Started);
        Assert.Equal(0, probe.Current);
        Assert.InRange(probe.Peak, 1, Environment.ProcessorCount + 1);
    }

    [Fact]
    public void Reset_AfterRun_ZeroesCounters()
    {
        var probe = new InFlightProbe();
        using (probe.Enter())
        {
        }

        probe.Reset();
        Assert.Equal(0, probe.Peak);
        Assert.Equal(0, probe.Started);
    }
}
