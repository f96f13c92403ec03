using Polly;

namespace FanOut.Http.Tests.RateLimiting;

/// <summary>A Polly v8 pipeline's rate limiter strategy on the bridge, sharing one budget with a FanOutAsync loop.</summary>
public sealed class PollyPipelineTests
{
    private const int Limit = 4;
    private const int LoopItems = 200;
    private const int PipelineCalls = 200;

    [Fact]
    public async Task AddRateLimiter_SharedWithFanOutAsync_NeverExceedsTheLimitTogether()
    {
        var limit = ConcurrencyLimit.Fixed(Limit);
        using var limiter = limit.AsRateLimiter();
        var pipeline = new ResiliencePipelineBuilder().AddRateLimiter(limiter).Build();
        var budget = new SharedBudget();

        var loop = budget.RunLoopAsync(limit, LoopItems);
        var calls = Enumerable.Range(0, PipelineCalls).Select(i => Task.Run(async () =>
            await pipeline.ExecuteAsync(ct => new ValueTask(budget.WorkAsync(SharedBudget.Pipeline, i == 0, ct)))));
        await Task.WhenAll(calls.Append(loop)).WaitAsync(SharedBudget.Hang);

        budget.AssertWithin(limit, LoopItems, PipelineCalls);
        Assert.Equal(PipelineCalls, limiter.GetStatistics()!.TotalSuccessfulLeases);
    }

    [Fact]
    public async Task AddRateLimiter_OnAnAdaptiveLimit_StaysWithinItsPeak()
    {
        var limit = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { MaxLimit = 8 });
        using var limiter = limit.AsRateLimiter();
        var pipeline = new ResiliencePipelineBuilder().AddRateLimiter(limiter).Build();
        var budget = new SharedBudget();

        var loop = budget.RunLoopAsync(limit, LoopItems);
        var calls = Enumerable.Range(0, PipelineCalls).Select(i => Task.Run(async () =>
            await pipeline.ExecuteAsync(ct => new ValueTask(budget.WorkAsync(SharedBudget.Pipeline, i == 0, ct)))));
        await Task.WhenAll(calls.Append(loop)).WaitAsync(SharedBudget.Hang);

        budget.AssertWithin(limit, LoopItems, PipelineCalls);
        Assert.True(budget.Peak <= 8);
    }
}
