using System.Collections.Concurrent;
using System.Net;

using FanOut.Tests.Diagnostics;
using FanOut.Tests.Infrastructure;

namespace FanOut.Tests.Overload;

/// <summary>
/// Issue 17 items 4 and 6: an item runs again only when the downstream said it did not process it (429, 503,
/// OverloadedException); a client-side timeout backs the limit off but fails the item; a retry-after hint of any size is
/// settled once, with the item's own exception.
/// </summary>
[Collection(nameof(SerialCollection))]
public sealed class ReRunRuleTests
{
    public static TheoryData<string> ClientTimeouts() => ["TimeoutException", "HttpClient timeout"];

    [Theory]
    [MemberData(nameof(ClientTimeouts))]
    public async Task FanOutAsync_ClientTimeoutWithDefaultOptions_RunsEachItemOnceAndBacksOff(string kind)
    {
        var limit = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { InitialLimit = 16 });
        var attempts = new ConcurrentDictionary<int, int>();
        var task = Enumerable.Range(0, 200).ToArray().FanOutAsync<int, int>(
            async (i, ct) =>
            {
                attempts.AddOrUpdate(i, 1, (_, n) => n + 1);
                await Task.Yield();
                // A POST the server booked but answered late: the client gave up, the work may have been done.
                throw kind == "TimeoutException"
                    ? new TimeoutException($"item {i}")
                    : new TaskCanceledException($"item {i}", new TimeoutException("HttpClient.Timeout elapsed"));
            },
            new FanOutOptions { Limit = limit, Errors = ErrorMode.RunAll });

        var failure = await Assert.ThrowsAsync<FanOutException<int>>(() => task.WithTimeout());
        Assert.Equal(200, failure.FailureCount);
        Assert.All(attempts.Values, n => Assert.Equal(1, n));
        Assert.Equal(200, attempts.Count);
        Assert.True(limit.Current < 16, $"the timeouts backed the limit off (limit {limit.Current})");
    }

    [Theory]
    [InlineData(HttpStatusCode.TooManyRequests)]
    [InlineData(HttpStatusCode.ServiceUnavailable)]
    public async Task FanOutAsync_DownstreamSaidNotProcessed_RunsTheItemAgain(HttpStatusCode status)
    {
        var attempts = new ConcurrentDictionary<int, int>();
        var results = await Enumerable.Range(0, 20).ToArray().FanOutAsync((i, _) =>
        {
            var attempt = attempts.AddOrUpdate(i, 1, (_, n) => n + 1);
            return attempt == 1 ? throw new HttpRequestException("rejected", null, status) : new ValueTask<int>(i);
        }).WithTimeout();

        Assert.Equal(Enumerable.Range(0, 20), results);
        Assert.All(attempts.Values, n => Assert.Equal(2, n));
    }

    [Fact]
    public async Task FanOutAsync_OverloadRetriesZero_NeverRunsAnItemAgain()
    {
        var attempts = 0;
        var task = new[] { 1 }.FanOutAsync(
            (_, _) =>
            {
                Interlocked.Increment(ref attempts);
                throw new OverloadedException();
            },
            new FanOutOptions { OverloadRetries = 0 });

        await Assert.ThrowsAsync<OverloadedException>(() => task.WithTimeout());
        Assert.Equal(1, attempts);
    }

    [Fact]
    public async Task FanOutAsync_UserSaysTimeoutIsOverload_RunsItAgain()
    {
        var attempts = 0;
        var options = new FanOutOptions
        {
            Limit = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { IsOverload = e => e is TimeoutException }),
        };
        var results = await new[] { 7 }.FanOutAsync(
            (i, _) => Interlocked.Increment(ref attempts) == 1 ? throw new TimeoutException() : new ValueTask<int>(i),
            options).WithTimeout();

        Assert.Equal([7], results);
        Assert.Equal(2, attempts);
    }

    public static TheoryData<string> HugeHints() =>
        ["TimeSpan.MaxValue", "double.PositiveInfinity", "1e300 seconds", "a 30-digit header", "long.MaxValue seconds"];

    [Theory]
    [MemberData(nameof(HugeHints))]
    public async Task FanOutAsync_RetryAfterAboveTheCap_FailsEachItemOnceWithItsOwnException(string hint)
    {
        var attempts = new ConcurrentDictionary<int, int>();
        var task = Enumerable.Range(0, 10).ToArray().FanOutAsync<int, int>(
            (i, _) =>
            {
                attempts.AddOrUpdate(i, 1, (_, n) => n + 1);
                throw Rejection(hint);
            },
            new FanOutOptions { Errors = ErrorMode.RunAll });

        var failure = await Assert.ThrowsAsync<FanOutException<int>>(() => task.WithTimeout());
        Assert.Equal(10, failure.FailureCount);
        Assert.Equal(Enumerable.Range(0, 10).Select(i => (long)i), failure.Failures.Select(f => f.Index));
        Assert.All(failure.Failures, f => Assert.IsNotType<OverflowException>(f.Exception));
        Assert.All(failure.Failures, f => Assert.Null(f.CallbackException));
        Assert.All(attempts.Values, n => Assert.Equal(1, n));
    }

    private static Exception Rejection(string hint)
    {
        if (hint == "TimeSpan.MaxValue")
        {
            return new OverloadedException("busy", TimeSpan.MaxValue);
        }

        var e = new HttpRequestException("429", null, HttpStatusCode.TooManyRequests);
        e.Data["Retry-After"] = hint switch
        {
            "double.PositiveInfinity" => double.PositiveInfinity,
            "1e300 seconds" => 1e300,
            "long.MaxValue seconds" => long.MaxValue,
            _ => "123456789012345678901234567890",
        };
        return e;
    }
}
