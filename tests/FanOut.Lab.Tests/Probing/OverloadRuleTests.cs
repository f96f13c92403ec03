using FanOut.Lab.Probing;

using static FanOut.Lab.Tests.Probing.LevelResults;

namespace FanOut.Lab.Tests.Probing;

public sealed class OverloadRuleTests
{
    private static readonly LevelResult s_baseline = Level(1, 50, p99Ms: 25);

    [Fact]
    public void Judge_ScalingWithoutFailures_IsCleanAndGoesOn()
    {
        var verdict = new OverloadRule(null).Judge(Level(2, 98, p99Ms: 26), s_baseline, [s_baseline]);
        Assert.Equal(new LevelVerdict(true, false, null), verdict);
    }

    [Fact]
    public void Judge_Rejections_StopsAndIsNotClean()
    {
        var verdict = new OverloadRule(null).Judge(Level(16, 260, rejected: 400), s_baseline, [s_baseline]);
        Assert.False(verdict.Clean);
        Assert.True(verdict.Stop);
        Assert.Contains("40% rejected", verdict.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Judge_OneRejectionInAThousand_GoesOnButIsNotClean()
    {
        var verdict = new OverloadRule(null).Judge(Level(4, 190, rejected: 1), s_baseline, [s_baseline]);
        Assert.False(verdict.Clean);
        Assert.False(verdict.Stop);
    }

    [Fact]
    public void Judge_Timeouts_Stop()
    {
        var verdict = new OverloadRule(null).Judge(Level(8, 390, timeouts: 50), s_baseline, [s_baseline]);
        Assert.True(verdict.Stop);
        Assert.Contains("timeout", verdict.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Judge_P99OverObjective_StopsAndIsNotClean()
    {
        var verdict = new OverloadRule(SloP99Ms: 40).Judge(Level(8, 390, p99Ms: 45), s_baseline, [s_baseline]);
        Assert.False(verdict.Clean);
        Assert.True(verdict.Stop);
        Assert.Contains("objective", verdict.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Judge_MedianSeveralTimesUncontended_Stops()
    {
        var verdict = new OverloadRule(null).Judge(Level(8, 390, p99Ms: 101), s_baseline, [s_baseline]);
        Assert.True(verdict.Clean);
        Assert.True(verdict.Stop);
        Assert.Contains("uncontended", verdict.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Judge_DoublingAddsUnderTenPercent_StopsAsSaturated()
    {
        var earlier = new[] { s_baseline, Level(32, 1_000) };
        var verdict = new OverloadRule(null).Judge(Level(64, 1_050, p99Ms: 60), s_baseline, earlier);
        Assert.True(verdict.Clean);
        Assert.True(verdict.Stop);
        Assert.StartsWith("saturated", verdict.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Judge_DoublingAddsMoreThanTenPercent_GoesOn()
    {
        var earlier = new[] { s_baseline, Level(16, 700) };
        Assert.False(new OverloadRule(null).Judge(Level(32, 1_000), s_baseline, earlier).Stop);
    }
}
