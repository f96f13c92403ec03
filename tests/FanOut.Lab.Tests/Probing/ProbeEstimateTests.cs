using FanOut.Lab.Probing;

namespace FanOut.Lab.Tests.Probing;

public sealed class ProbeEstimateTests
{
    [Fact]
    public void For_FastEndpoint_IsCappedByTheBudgetAndSaysSo()
    {
        var estimate = ProbeEstimate.For(new ProbeSettings { Url = new Uri("http://127.0.0.1/") }, TimeSpan.FromMilliseconds(1));
        Assert.Equal(ProbeSettings.DefaultMaxRequests, estimate.Requests);
        Assert.Contains("~20,000 requests", estimate.Text, StringComparison.Ordinal);
        Assert.EndsWith("the budget is 20,000 (--max-requests), which would stop it first.", estimate.Text, StringComparison.Ordinal);
    }

    [Fact]
    public void For_SlowEndpoint_CountsEachLevelsPlanAndTheOpenLoopCheck()
    {
        // 100 ms calls, up to 4 at once: level 1 needs 50 answers (5 s, 50 requests), 2 needs 2.5 s (50), 4 needs
        // 1.25 s (50); a third more for the search, plus the 3 s open-loop check.
        var settings = new ProbeSettings { Url = new Uri("http://127.0.0.1/"), MaxConcurrency = 4 };
        var estimate = ProbeEstimate.For(settings, TimeSpan.FromMilliseconds(100));
        Assert.Equal(200, estimate.Requests);
        Assert.Equal((8.75 * 4 / 3) + 3, estimate.Seconds, 6);
        Assert.DoesNotContain("stop it first", estimate.Text, StringComparison.Ordinal);
    }

    [Fact]
    public void For_MaxRate_PacesTheEstimate()
    {
        var settings = new ProbeSettings { Url = new Uri("http://127.0.0.1/"), MaxConcurrency = 1, MaxRatePerSecond = 10, MaxRequests = null };
        var estimate = ProbeEstimate.For(settings, TimeSpan.FromMilliseconds(1));
        Assert.Equal(67, estimate.Requests);
        Assert.Contains("no budget", estimate.Text, StringComparison.Ordinal);
    }
}
