namespace FanOut.Tests.Overload;

/// <summary><see cref="OverloadedException.FindRetryAfter"/>: the hint a fan-out call honours, for limits written outside FanOut.</summary>
public sealed class FindRetryAfterTests
{
    private static readonly DateTimeOffset s_now = new(2026, 11, 25, 9, 0, 0, TimeSpan.Zero);

    [Fact]
    public void OverloadedExceptionDeepInTheChain_GivesItsHint()
    {
        var failure = new InvalidOperationException("outer", new HttpRequestException("429", new OverloadedException("busy", TimeSpan.FromSeconds(3))));
        Assert.Equal(TimeSpan.FromSeconds(3), OverloadedException.FindRetryAfter(failure, s_now));
    }

    [Theory]
    [InlineData("120", 120.0)]
    [InlineData("Wed, 25 Nov 2026 09:00:30 GMT", 30.0)]
    [InlineData("Wed, 25 Nov 2026 08:59:00 GMT", 0.0)]
    [InlineData("99999999999999999999999999999999", 365 * 86400.0)]
    public void RetryAfterInData_IsRead(string header, double seconds)
    {
        var failure = new HttpRequestException("429");
        failure.Data["Retry-After"] = header;
        Assert.Equal(TimeSpan.FromSeconds(seconds), OverloadedException.FindRetryAfter(failure, s_now));
    }

    [Fact]
    public void NoHint_IsNull_AndNullFailureThrows()
    {
        Assert.Null(OverloadedException.FindRetryAfter(new TimeoutException(), s_now));
        Assert.Null(OverloadedException.FindRetryAfter(new OverloadedException("busy"), s_now));
        Assert.Throws<ArgumentNullException>(() => OverloadedException.FindRetryAfter(null!, s_now));
    }
}
