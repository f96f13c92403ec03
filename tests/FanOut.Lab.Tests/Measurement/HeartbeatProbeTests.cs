using FanOut.Lab.Measurement;

namespace FanOut.Lab.Tests.Measurement;

public sealed class HeartbeatProbeTests
{
    /// <summary>Generous: the test waits for beats to happen, it does not time them.</summary>
    private const int PatienceMs = 30_000;

    [Fact]
    public void Summarize_AfterSomeBeats_RecordsBothKindsWithOrderedPercentiles()
    {
        using var probe = new HeartbeatProbe(TimeSpan.FromMilliseconds(1));
        probe.Start();
        // Wait for both kinds of beat, not a total: at load 12 six pool beats ran before the first timer beat ("timer beats 0").
        var beat = SpinWait.SpinUntil(() => probe.Executions >= 6 && probe.TimerBeatsSoFar >= 1 && probe.PoolBeatsRan >= 1, PatienceMs);
        probe.Stop();

        var summary = probe.Summarize();

        Assert.True(beat, "the heartbeats never ran");
        Assert.True(summary.PoolBeats >= 1, $"pool beats {summary.PoolBeats}");
        Assert.True(summary.TimerBeats >= 1, $"timer beats {summary.TimerBeats}");
        Assert.InRange(summary.PoolP50Ms, 0, summary.PoolP99Ms);
        Assert.InRange(summary.PoolP99Ms, summary.PoolP50Ms, summary.PoolMaxMs);
        Assert.InRange(summary.TimerP99Ms, summary.TimerP50Ms, summary.TimerMaxMs);
    }

    [Fact]
    public void Summarize_NextRun_CountsOnlyItsOwnBeats()
    {
        using var probe = new HeartbeatProbe(TimeSpan.FromMilliseconds(1));
        probe.Start();
        SpinWait.SpinUntil(() => probe.Executions >= 6, PatienceMs);
        probe.Stop();
        var first = probe.Summarize();

        // The second run counts the beats queued between its own Start and Stop, never the first run's: on a quiet machine
        // none or one (it stops at once), on a loaded one as many as ran while the test thread waited between the two calls.
        var before = probe.BeatsQueued;
        probe.Start();
        probe.Stop();
        var queued = probe.BeatsQueued - before;
        var second = probe.Summarize();

        Assert.True(first.PoolBeats >= 1, $"the first run has {first.PoolBeats} beats");
        Assert.True(second.PoolBeats <= queued, $"the second run kept {second.PoolBeats} beats, {queued} of them its own");
    }

    [Fact]
    public void Summarize_SkippingMoreThanTheRun_CountsNoBeatAndWithoutSkipCountsThemAll()
    {
        using var probe = new HeartbeatProbe(TimeSpan.FromMilliseconds(1));
        probe.Start();
        var beat = SpinWait.SpinUntil(() => probe.TimerBeatsSoFar >= 2 && probe.PoolBeatsRan >= 2, PatienceMs);
        probe.Stop();

        var all = probe.Summarize();
        var none = probe.Summarize(skipFirst: TimeSpan.FromHours(1));

        Assert.True(beat, "the heartbeats never ran");
        Assert.True(all.PoolBeats >= 2 && all.TimerBeats >= 2, $"pool beats {all.PoolBeats}, timer beats {all.TimerBeats}");
        Assert.Equal((0, 0), (none.PoolBeats, none.TimerBeats));
        Assert.Throws<ArgumentOutOfRangeException>(() => probe.Summarize(TimeSpan.FromSeconds(-1)));
    }
}
