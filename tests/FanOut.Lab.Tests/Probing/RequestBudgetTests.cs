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

    [Fact]
    public async Task TakeAsync_MaxRate_HandsOutSlotsOneIntervalApart()
    {
        var time = new Microsoft.Extensions.Time.Testing.FakeTimeProvider();
        var budget = new RequestBudget(null, 10, time);
        Assert.True(await budget.TakeAsync(CancellationToken.None));
        var second = budget.TakeAsync(CancellationToken.None).AsTask();
        var third = budget.TakeAsync(CancellationToken.None).AsTask();
        Assert.False(second.IsCompleted);
        time.Advance(TimeSpan.FromMilliseconds(99));
        Assert.False(second.IsCompleted);
        time.Advance(TimeSpan.FromMilliseconds(1));
        Assert.True(await second);
        Assert.False(third.IsCompleted);
        time.Advance(TimeSpan.FromMilliseconds(100));
        Assert.True(await third);
        Assert.Equal(3, budget.Sent);
    }

    [Fact]
    public async Task TakeAsync_BudgetSpent_ReturnsFalseWithoutWaiting()
    {
        var budget = new RequestBudget(1, 1, new Microsoft.Extensions.Time.Testing.FakeTimeProvider());
        Assert.True(await budget.TakeAsync(CancellationToken.None));
        Assert.False(await budget.TakeAsync(CancellationToken.None));
        Assert.Equal(1, budget.Sent);
    }

    [Fact]
    public void ProbeSettings_Default_HasARequestBudget() =>
        Assert.Equal(ProbeSettings.DefaultMaxRequests, new ProbeSettings { Url = new Uri("http://127.0.0.1/") }.MaxRequests);
}
