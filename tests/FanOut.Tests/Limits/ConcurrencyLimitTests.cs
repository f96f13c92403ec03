namespace FanOut.Tests.Limits;

public sealed class ConcurrencyLimitTests
{
    [Fact]
    public void Fixed_Zero_ThrowsArgumentOutOfRangeException()
    {
        Assert.Equal("limit", Assert.Throws<ArgumentOutOfRangeException>(() => ConcurrencyLimit.Fixed(0)).ParamName);
    }

    [Fact]
    public void Fixed_Positive_CurrentAndPeakAreTheLimit()
    {
        var limit = ConcurrencyLimit.Fixed(7);
        Assert.Equal(7, limit.Current);
        Assert.Equal(7, limit.Peak);
        Assert.Equal("fixed", limit.Kind);
    }

    [Fact]
    public void Unbounded_Current_IsIntMaxValue()
    {
        Assert.Equal(int.MaxValue, ConcurrencyLimit.Unbounded.Current);
    }

    [Fact]
    public void Adaptive_InvalidOptions_ThrowArgumentOutOfRangeException()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { MinLimit = 0 }));
        Assert.Throws<ArgumentOutOfRangeException>(() => ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { MinLimit = 5, MaxLimit = 4 }));
        Assert.Throws<ArgumentOutOfRangeException>(() => ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { InitialLimit = 300 }));
        Assert.Throws<ArgumentOutOfRangeException>(() => ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { BackoffRatio = 1.0 }));
        Assert.Throws<ArgumentOutOfRangeException>(() => ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { SlowStartPace = double.NaN }));
        var pace = Assert.Throws<ArgumentOutOfRangeException>(() => ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { SlowStartPace = 0.5 }));
        Assert.Equal("SlowStartPace", pace.ParamName);
        Assert.Contains("1 or more", pace.Message, StringComparison.Ordinal);
        Assert.NotNull(ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { SlowStartPace = double.PositiveInfinity }));
        foreach (var headroom in new[] { 0.9, 4.5, double.NaN })
        {
            var room = Assert.Throws<ArgumentOutOfRangeException>(() => ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { Headroom = headroom }));
            Assert.Equal("Headroom", room.ParamName);
            Assert.Contains("from 1 to 4", room.Message, StringComparison.Ordinal);
        }

        Assert.NotNull(ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { Headroom = 1.0 }));
    }

    [Fact]
    public async Task WaitAsync_PermitReleased_HandsItToTheOldestWaiterFirst()
    {
        var limit = ConcurrencyLimit.Fixed(1);
        Assert.True(limit.TryAcquire());
        var first = limit.WaitAsync(CancellationToken.None);
        var second = limit.WaitAsync(CancellationToken.None);
        Assert.False(limit.TryAcquire()); // waiters are served before newcomers

        limit.Release();
        Assert.True(await first);
        Assert.False(second.IsCompleted);
        limit.Release();
        Assert.True(await second);
        Assert.Equal(1, limit.InFlight);
    }

    [Fact]
    public async Task WaitAsync_Canceled_ReturnsFalseAndLeavesTheQueue()
    {
        var limit = ConcurrencyLimit.Fixed(1);
        Assert.True(limit.TryAcquire());
        using var cts = new CancellationTokenSource();
        var waiter = limit.WaitAsync(cts.Token);
        await cts.CancelAsync();

        Assert.False(await waiter);
        limit.Release();
        Assert.True(limit.TryAcquire()); // no ghost waiter holds the permit
    }

    [Fact]
    public void AdaptiveLimitOptions_DefaultOverloadTest_Recognises429And503ButNotTimeouts()
    {
        // A timeout is not "the downstream did not process it": it backs the limit off but never re-runs the item.
        Assert.False(AdaptiveLimitOptions.IsOverloadByDefault(new TimeoutException()));
        Assert.False(AdaptiveLimitOptions.IsOverloadByDefault(new TaskCanceledException("timed out", new TimeoutException())));
        Assert.True(AdaptiveLimitOptions.IsOverloadByDefault(new OverloadedException()));
        Assert.True(AdaptiveLimitOptions.IsOverloadByDefault(new HttpRequestException("busy", null, System.Net.HttpStatusCode.ServiceUnavailable)));
        Assert.True(AdaptiveLimitOptions.IsOverloadByDefault(new HttpRequestException("busy", null, System.Net.HttpStatusCode.TooManyRequests)));
        Assert.False(AdaptiveLimitOptions.IsOverloadByDefault(new HttpRequestException("nope", null, System.Net.HttpStatusCode.NotFound)));
        Assert.False(AdaptiveLimitOptions.IsOverloadByDefault(new InvalidOperationException()));
    }
}
