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
}
