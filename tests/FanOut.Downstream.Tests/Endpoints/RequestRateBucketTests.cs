using FanOut.Downstream.Endpoints;

using Microsoft.Extensions.Time.Testing;

namespace FanOut.Downstream.Tests.Endpoints;

public sealed class RequestRateBucketTests
{
    [Fact]
    public void TryTake_ClockMovingInLateSteps_PassesExactlyTheRate()
    {
        // A busy machine: the time moves in uneven steps of 1 to 37 ms, and at every step requests drain the bucket. A timer
        // refilled per tick would pass one period's tokens per late step; the elapsed time must pass 300 a second exactly.
        var time = new FakeTimeProvider();
        var bucket = new RequestRateBucket(300, burst: 30, time);
        var passed = 0;
        while (bucket.TryTake(out _))
        {
            passed++; // the burst
        }

        Assert.Equal(30, passed);
        passed = 0;
        var step = 0;
        var elapsed = TimeSpan.Zero;
        while (elapsed < TimeSpan.FromSeconds(10))
        {
            var advance = TimeSpan.FromMilliseconds(1 + ((step++ * 7) % 37));
            time.Advance(advance);
            elapsed += advance;
            while (bucket.TryTake(out _))
            {
                passed++;
            }
        }

        Assert.InRange(passed, (int)(300 * elapsed.TotalSeconds) - 1, (int)(300 * elapsed.TotalSeconds));
    }

    [Fact]
    public void TryTake_Empty_SaysWhenTheNextTokenComes()
    {
        var time = new FakeTimeProvider();
        var bucket = new RequestRateBucket(100, burst: 1, time);
        Assert.True(bucket.TryTake(out _));

        Assert.False(bucket.TryTake(out var retryAfter));
        Assert.Equal(10, retryAfter.TotalMilliseconds, precision: 3);
        time.Advance(TimeSpan.FromMilliseconds(10));
        Assert.True(bucket.TryTake(out _));
    }

    [Fact]
    public void TryTake_IdleLongerThanTheBurst_KeepsNoMoreThanTheBurst()
    {
        var time = new FakeTimeProvider();
        var bucket = new RequestRateBucket(300, burst: 30, time);
        time.Advance(TimeSpan.FromMinutes(1));
        var passed = 0;
        while (bucket.TryTake(out _))
        {
            passed++;
        }

        Assert.Equal(30, passed);
    }
}
