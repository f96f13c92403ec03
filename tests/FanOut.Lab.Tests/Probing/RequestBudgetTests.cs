using FanOut.Lab.Probing;

namespace FanOut.Lab.Tests.Probing;

public sealed class RequestBudgetTests
{
    [Fact]
    public async Task TryTake_ManyThreads_NeverHandsOutMoreThanTheBudget()
    {
        var budget = new RequestBudget(1_000);
        var taken = 0;
        await Task.WhenAll(Enumerable.Range(0, 8).Select(_ => Task.Run(() =>
        {
            while (budget.TryTake())
            {
                Interlocked.Increment(ref taken);
            }
        })));
        Assert.Equal(1_000, taken);
        Assert.Equal(1_000, budget.Sent);
        Assert.True(budget.Exhausted);
    }

    [Fact]
    public void TryTake_NoLimit_AlwaysSucceeds()
    {
        var budget = new RequestBudget(null);
        Assert.All(Enumerable.Range(0, 100), _ => Assert.True(budget.TryTake()));
        Assert.False(budget.Exhausted);
    }
}
