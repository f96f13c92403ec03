using System.Threading.RateLimiting;

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

        await RunBesideALoopAsync(limit, limiter);

        Assert.Equal(PipelineCalls, limiter.GetStatistics()!.TotalSuccessfulLeases);
    }

    [Fact]
    public async Task AddRateLimiter_OnAnAdaptiveLimit_StaysWithinItsPeak()
    {
        var limit = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { MaxLimit = 8 });
        using var limiter = limit.AsRateLimiter();

        var budget = await RunBesideALoopAsync(limit, limiter);

        Assert.True(budget.Peak <= 8);
    }

    /// <summary>
    /// Runs <see cref="PipelineCalls"/> calls through a pipeline whose rate limiter is <paramref name="limiter"/> (the bridge
    /// of <paramref name="limit"/>) beside a FanOutAsync loop of <see cref="LoopItems"/> on <paramref name="limit"/>, and
    /// checks that together they stayed within it.
    /// </summary>
    private static async Task<SharedBudget> RunBesideALoopAsync(ConcurrencyLimit limit, RateLimiter limiter)
    {
        var pipeline = new ResiliencePipelineBuilder().AddRateLimiter(limiter).Build();
        var budget = new SharedBudget();
        await budget.RunBothSidesAsync(limit, LoopItems, PipelineCalls, async i =>
            await pipeline.ExecuteAsync(ct => new ValueTask(budget.WorkAsync(SharedBudget.Pipeline, i == 0, ct))));
        budget.AssertWithin(limit, LoopItems, PipelineCalls);
        return budget;
    }
}
