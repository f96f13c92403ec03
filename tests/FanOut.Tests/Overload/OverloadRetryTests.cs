using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using System.Net;
using System.Threading.RateLimiting;

using FanOut.Diagnostics;
using FanOut.Execution;
using FanOut.Tests.Diagnostics;
using FanOut.Tests.Infrastructure;

using Microsoft.Extensions.Time.Testing;

namespace FanOut.Tests.Overload;

/// <summary>Overload is a drop, not a failure: with an adaptive limit an item rejected as overloaded runs again.</summary>
[Collection(nameof(SerialCollection))]
public sealed class OverloadRetryTests
{
    private static HttpRequestException TooManyRequests() => new("429", null, HttpStatusCode.TooManyRequests);

    [Fact]
    public async Task FanOutAsync_RejectingDownstreamDefaultOptions_EveryItemSucceedsInOrder()
    {
        const int capacity = 8;
        var inFlight = 0;
        var rejected = 0;
        var results = await Enumerable.Range(0, 1000).ToArray().FanOutAsync(async (i, ct) =>
        {
            if (Interlocked.Increment(ref inFlight) > capacity)
            {
                Interlocked.Decrement(ref inFlight);
                Interlocked.Increment(ref rejected);
                throw TooManyRequests();
            }

            try
            {
                await Task.Delay(2, ct);
                return i;
            }
            finally
            {
                Interlocked.Decrement(ref inFlight);
            }
        }).WithTimeout();

        Assert.Equal(Enumerable.Range(0, 1000), results);
        Assert.True(rejected > 0, "the downstream was probed beyond its capacity at least once");
    }

    [Fact]
    public async Task FanOutAsync_RetryAfterHint_ItemWaitsTheHintBeforeRunningAgain()
    {
        var time = new FakeTimeProvider();
        var limit = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { TimeProvider = time });
        var attempts = new ConcurrentQueue<DateTimeOffset>();
        var task = new[] { 1 }.FanOutAsync((i, _) =>
        {
            attempts.Enqueue(time.GetUtcNow());
            return attempts.Count == 1 ? throw new OverloadedException("busy", TimeSpan.FromSeconds(5)) : new ValueTask<int>(i);
        }, new FanOutOptions { Limit = limit });

        await Wait.UntilAsync(() => attempts.Count == 1, "the first attempt ran");

        // The worker gives its permit back just before it starts the hint's delay on the fake clock: advancing the clock
        // earlier would start the delay late (a race that made this test flaky on a loaded machine).
        await Wait.UntilAsync(() => limit.InFlight == 0, "the overloaded item gave its permit back");
        await Task.Delay(50);
        time.Advance(TimeSpan.FromSeconds(4));
        await Task.Delay(50);
        Assert.Single(attempts);

        time.Advance(TimeSpan.FromSeconds(1));
        var results = await task.WithTimeout();
        Assert.Equal([1], results);
        Assert.Equal(TimeSpan.FromSeconds(5), attempts.Last() - attempts.First());
    }

    [Fact]
    public async Task FanOutAsync_RetriesExhausted_ItemFailsInCallersModeAfterEveryAttempt()
    {
        var runs = new int[3];
        var task = Enumerable.Range(0, 3).ToArray().FanOutAsync(
            (i, _) =>
            {
                Interlocked.Increment(ref runs[i]);
                return i == 1 ? throw TooManyRequests() : new ValueTask<int>(i);
            },
            new FanOutOptions { Errors = ErrorMode.RunAll, OverloadRetries = 3 });

        var error = await Assert.ThrowsAsync<FanOutException<int>>(() => task.WithTimeout());

        Assert.Equal(1, Assert.Single(error.Failures).Index);
        Assert.Equal([1, 4, 1], runs);
    }

    [Fact]
    public async Task FanOutAsync_OverloadRetriesZero_FailsAtFirstOverload()
    {
        var runs = 0;
        var task = new[] { 1 }.FanOutAsync((i, _) => { Interlocked.Increment(ref runs); return i == 1 ? throw TooManyRequests() : ValueTask.CompletedTask; }, new FanOutOptions { OverloadRetries = 0 });

        await Assert.ThrowsAsync<HttpRequestException>(() => task.WithTimeout());
        Assert.Equal(1, runs);
    }

    [Fact]
    public async Task FanOutAsync_FixedLimit_OverloadIsAFailureLikeAnyOther()
    {
        var runs = 0;
        var task = new[] { 1 }.FanOutAsync((i, _) => { Interlocked.Increment(ref runs); return i == 1 ? throw TooManyRequests() : ValueTask.CompletedTask; }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2) });

        await Assert.ThrowsAsync<HttpRequestException>(() => task.WithTimeout());
        Assert.Equal(1, runs);
    }

    [Fact]
    public async Task FanOutAsync_ReRuns_CountedOnTheRetriedInstrument()
    {
        using var listener = new MeterListener();
        long retried = 0;
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == FanOutInstruments.MeterName && instrument.Name == FanOutInstruments.ItemsRetried)
            {
                l.EnableMeasurementEvents(instrument);
            }
        };
        listener.SetMeasurementEventCallback<long>((_, value, _, _) => Interlocked.Add(ref retried, value));
        listener.Start();

        var attempts = 0;
        await new[] { 1 }.FanOutAsync((i, _) => Interlocked.Increment(ref attempts) <= 2 ? throw TooManyRequests() : ValueTask.CompletedTask).WithTimeout();

        Assert.Equal(3, attempts);
        Assert.Equal(2, Interlocked.Read(ref retried));
    }

    [Fact]
    public void Options_OverloadRetriesOutOfRange_ThrowsNamingTheValueAndRange()
    {
        var error = Assert.Throws<ArgumentOutOfRangeException>(() => { _ = new[] { 1 }.FanOutAsync((_, _) => ValueTask.CompletedTask, new FanOutOptions { OverloadRetries = -1 }); });
        Assert.Equal(nameof(FanOutOptions.OverloadRetries), error.ParamName);
        Assert.Contains("0 (off) to 100", error.Message);
    }

    [Theory]
    [InlineData("7", 7)]
    [InlineData(3, 3)]
    [InlineData(2.5, 2.5)]
    public void RetryAfterHint_InExceptionData_ReadAsSeconds(object value, double seconds)
    {
        var inner = TooManyRequests();
        inner.Data[RetryAfterHint.DataKey] = value;
        var failure = new InvalidOperationException("wrapped", inner);

        Assert.Equal(TimeSpan.FromSeconds(seconds), RetryAfterHint.From(failure, DateTimeOffset.UnixEpoch));
    }

    [Fact]
    public void RetryAfterHint_HttpDate_ReadAsTimeUntilThen()
    {
        var now = new DateTimeOffset(2026, 11, 22, 12, 0, 0, TimeSpan.Zero);
        var failure = TooManyRequests();
        failure.Data[RetryAfterHint.DataKey] = now.AddSeconds(30).ToString("r");

        Assert.Equal(TimeSpan.FromSeconds(30), RetryAfterHint.From(failure, now));
        Assert.Null(RetryAfterHint.From(TooManyRequests(), now));
    }

    [Fact]
    public async Task FanOutAsync_RateLimiter_PacesStartsToItsTokens()
    {
        using var bucket = new TokenBucketRateLimiter(new TokenBucketRateLimiterOptions
        {
            TokenLimit = 3,
            TokensPerPeriod = 2,
            ReplenishmentPeriod = TimeSpan.FromMilliseconds(1), // a manual replenish adds tokens once this has passed
            AutoReplenishment = false,
            QueueLimit = 100,
        });
        var started = 0;
        var task = Enumerable.Range(0, 7).ToArray().FanOutAsync(
            (i, _) => { Interlocked.Increment(ref started); return new ValueTask<int>(i); },
            new FanOutOptions { Limit = ConcurrencyLimit.Fixed(8), RateLimiter = bucket });

        await Wait.UntilAsync(() => Volatile.Read(ref started) == 3, "the bucket's first tokens were used");
        await Task.Delay(50);
        Assert.Equal(3, Volatile.Read(ref started));

        var deadline = DateTime.UtcNow + Wait.Timeout;
        while (!task.IsCompleted && DateTime.UtcNow < deadline)
        {
            bucket.TryReplenish();
            await Task.Delay(5);
        }

        Assert.Equal(Enumerable.Range(0, 7), await task.WithTimeout());
    }
}
