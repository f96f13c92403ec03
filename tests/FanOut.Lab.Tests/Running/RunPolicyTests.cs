using FanOut.Lab.Running;

namespace FanOut.Lab.Tests.Running;

public sealed class RunPolicyTests
{
    private static readonly RunPolicy s_policy = new(1, 3, 5, TimeSpan.FromSeconds(1));

    [Theory]
    [InlineData(0, 10_000, true)]   // below MinRuns: always, however long
    [InlineData(2, 10_000, true)]
    [InlineData(3, 500, true)]      // budget left
    [InlineData(3, 1_000, false)]   // budget spent
    [InlineData(5, 0, false)]       // MaxRuns reached
    public void WantsAnotherRun_CountAndBudget_Decides(int runs, int spentMs, bool expected)
    {
        Assert.Equal(expected, s_policy.WantsAnotherRun(runs, TimeSpan.FromMilliseconds(spentMs)));
    }

    [Fact]
    public void WantsAnotherRun_TightStatistics_StopsAfterMinRuns()
    {
        var policy = s_policy with { TightRelativeError = 0.02 };

        Assert.False(policy.WantsAnotherRun([100.0, 100.1, 99.9]));
        Assert.True(policy.WantsAnotherRun([100.0, 130.0, 80.0]));
        Assert.True(policy.WantsAnotherRun([100.0, 100.0]));
    }

    [Fact]
    public void Run_RunLongerThanLongRun_MeasuresOnceAndSaysWhy()
    {
        var policy = new RunPolicy(1, 3, 3, TimeSpan.Zero) { LongRun = TimeSpan.FromMilliseconds(1) };
        var labCase = new FanOut.Lab.Scenarios.LabCase(new FanOut.Lab.Strategies.SequentialAwaitStrategy(), () => new FanOut.Lab.Workloads.DelayWorkload(FanOut.Lab.Workloads.DelaySchedule.Fixed(1, 2)), 2);

        var result = new InProcessCaseRunner(policy).Run(labCase);

        Assert.Equal(1, result.Runs);
        Assert.StartsWith("measured once", result.Note, StringComparison.Ordinal);
    }
}
