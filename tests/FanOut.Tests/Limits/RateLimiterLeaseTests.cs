using System.Threading.RateLimiting;

using FanOut.Tests.Infrastructure;

namespace FanOut.Tests.Limits;

/// <summary>A rate limiter beside the concurrency limit: one lease per item run, and never more workers queued for leases than the limit.</summary>
public sealed class RateLimiterLeaseTests
{
    [Theory]
    [InlineData(1)]
    [InlineData(8)]
    [InlineData(32)]
    public async Task FanOutAsync_TokenBucket_SpendsOneTokenPerItemAndQueuesAtMostTheLimit(int limit)
    {
        const int Items = 200;
        using var bucket = new TokenBucketRateLimiter(new TokenBucketRateLimiterOptions
        {
            TokenLimit = 1,
            TokensPerPeriod = 1,
            ReplenishmentPeriod = TimeSpan.FromMilliseconds(1), // a manual replenish adds a token once this has passed
            AutoReplenishment = false,
            QueueLimit = int.MaxValue,
        });
        var ran = 0;
        var run = Enumerable.Range(0, Items).ToArray().FanOutAsync(
            async (i, ct) =>
            {
                Interlocked.Increment(ref ran);
                await Task.Yield();
                return i;
            },
            new FanOutOptions { Limit = ConcurrencyLimit.Fixed(limit), RateLimiter = bucket });

        long queuedPeak = 0;
        var deadline = DateTime.UtcNow + Wait.Timeout;
        while (!run.IsCompleted && DateTime.UtcNow < deadline)
        {
            queuedPeak = Math.Max(queuedPeak, bucket.GetStatistics()!.CurrentQueuedCount);
            bucket.TryReplenish();
            await Task.Delay(2);
        }

        Assert.Equal(Enumerable.Range(0, Items), await run.WithTimeout());
        Assert.Equal(Items, ran);

        // Before the fix every permit a worker gave back while it queued for a lease started another worker, which queued
        // too: with a limit of 8, 190 queued and 394 tokens were spent on 200 items (a 500/s bucket ran 250 items/s).
        var spent = bucket.GetStatistics()!.TotalSuccessfulLeases;
        Assert.True(spent <= Items + 1, $"{spent} tokens spent on {Items} items");
        Assert.True(queuedPeak <= limit, $"{queuedPeak} workers queued for leases with a limit of {limit}");
    }
}
