using FanOut.Lab.Probing;

using static FanOut.Lab.Tests.Probing.LevelResults;

namespace FanOut.Lab.Tests.Probing;

/// <summary>The capacity test and the search's next level, on levels a model server of known capacity would give.</summary>
public sealed class CapacitySearchTests
{
    private const double ServiceMs = 50;

    [Fact]
    public void Failure_ByRejections_OnlyRejectionsAboveOnePercentFail()
    {
        var search = new CapacitySearch(true, ServiceMs, 1, 50, null);
        Assert.Null(search.Failure(Level(12, 240, requests: 1_000)));
        Assert.Null(search.Failure(Level(12, 240, rejected: 10, requests: 1_000)));
        Assert.Equal("7.7% rejected (429/503)", search.Failure(Level(13, 240, rejected: 77, requests: 1_000)));
        Assert.Equal("2% failed", search.Failure(Level(13, 240, timeouts: 20, requests: 1_000)));
    }

    [Fact]
    public void Failure_ByRejections_RejectionsOneAboveALevelWithNoneFail()
    {
        // A capacity of 30 with a fixed latency: 31 workers in lockstep, 3 of 303 refused (under the allowance of 0.5 / 31 of
        // them), the level under it clean. The probe once called 31 the capacity, and its open-loop check then refused 4.
        var search = new CapacitySearch(true, ServiceMs, 1, 50, null);
        var clean = Level(30, 566, requests: 300);
        var lockstep = Level(31, 565, rejected: 3, requests: 303);
        Assert.Null(search.Failure(lockstep));
        Assert.Equal("1% rejected (429/503) where 30 had none", search.Failure(lockstep, clean));
        Assert.Null(search.Failure(lockstep, Level(30, 566, rejected: 1, requests: 300)));
        Assert.Null(search.Failure(lockstep, Level(29, 566, requests: 300)));
        Assert.Null(new CapacitySearch(false, ServiceMs, 1, 50, null).Failure(lockstep with { LatencyMeanMs = ServiceMs }, clean));
    }

    [Fact]
    public void Failure_SloGiven_AP99OverItFails()
    {
        var search = new CapacitySearch(true, ServiceMs, 1, 50, 30);
        Assert.Null(search.Failure(Level(4, 80, p99Ms: 30)));
        Assert.Contains("over the 30 ms objective", search.Failure(Level(4, 80, p99Ms: 31)), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(12, 12, true)]
    [InlineData(12, 13, false)]
    [InlineData(30, 30, true)]
    [InlineData(30, 31, false)]
    public void Failure_ByLatency_OneQueuedRequestFails(int capacity, int concurrency, bool within)
    {
        var search = new CapacitySearch(false, ServiceMs, 1, 50, null);
        var failure = search.Failure(QueueingLevel(capacity, concurrency));
        Assert.Equal(within, failure is null);
        if (!within)
        {
            Assert.Contains("requests queued", failure, StringComparison.Ordinal);
        }
    }

    [Fact]
    public void Failure_ByLatency_SentenceAddsUp()
    {
        // R0 50 ms (sd 1, 50 answers); 13 at once against 12 slots: mean 13/12 x 50 = 54.2 ms over 1,000 answers.
        var search = new CapacitySearch(false, ServiceMs, 1, 50, null);
        var noise = 2 * Math.Sqrt((1.0 / 1_000) + (1.0 / 50));
        Assert.Equal(
            string.Create(System.Globalization.CultureInfo.InvariantCulture, $"mean latency 54.17 ms is over {52 + noise:0.00} ms (unqueued 50.00 ms x 13/12.5 = 52.00 ms, plus {noise:0.00} ms of measurement noise): requests queued"),
            search.Failure(QueueingLevel(12, 13)));
    }

    [Fact]
    public void Failure_ByLatency_SubMillisecondFiguresKeepTheirDigits()
    {
        // A fast endpoint (50 us): with one decimal the sentence would read "0.1 ms is over 0.0 ms".
        var search = new CapacitySearch(false, 0.05, 0.001, 1_000, null);
        var failure = search.Failure(Level(3, 40_000, requests: 10_000) with { LatencyMeanMs = 0.09, LatencyStdDevMs = 0.01 });
        Assert.StartsWith("mean latency 0.0900 ms is over 0.06", failure, StringComparison.Ordinal);
        Assert.Contains("(unqueued 0.0500 ms x 3/2.5 = 0.0600 ms, plus 0.0001 ms", failure, StringComparison.Ordinal);
    }

    [Fact]
    public void Estimate_QueueingLevelsBeyond_IsXTimesR0()
    {
        var search = new CapacitySearch(false, ServiceMs, 1, 50, null);
        Assert.Equal(12, search.Estimate([QueueingLevel(12, 16), QueueingLevel(12, 32)])!.Value, 6);
    }

    [Fact]
    public void Estimate_RejectingLevelsBeyond_IsTheOkRequestsInFlight()
    {
        var search = new CapacitySearch(true, ServiceMs, 1, 50, null);
        Assert.Equal(10, search.Estimate([RejectingLevel(10, 16), RejectingLevel(10, 32), RejectingLevel(10, 64)])!.Value, 6);
        Assert.Null(search.Estimate([]));
    }

    [Fact]
    public void Next_EstimateGuided_MeasuresTheEstimateThenStepsOfOne()
    {
        Assert.Equal(12, CapacitySearch.Next(8, 16, 12.1, 0));
        Assert.Equal(13, CapacitySearch.Next(12, 16, 12.1, 1));
        Assert.Equal(11, CapacitySearch.Next(8, 12, 12.4, 1));
        Assert.Null(CapacitySearch.Next(12, 13, 12.1, 2));
    }

    [Fact]
    public void Next_EstimateMisledOrMissing_Bisects()
    {
        Assert.Equal(24, CapacitySearch.Next(16, 32, null, 0));
        Assert.Equal(20, CapacitySearch.Next(16, 24, 30, CapacitySearch.GuidedSteps));
    }

    /// <summary>The whole search on a model server: ramp 1, 2, 4, ... to the first level beyond the capacity, then
    /// <see cref="CapacitySearch.Next"/> until the two meet. Capacities between powers of two come out exact.</summary>
    [Theory]
    [InlineData(3, true)]
    [InlineData(10, true)]
    [InlineData(12, true)]
    [InlineData(30, true)]
    [InlineData(100, true)]
    [InlineData(5, false)]
    [InlineData(12, false)]
    [InlineData(30, false)]
    [InlineData(100, false)]
    public void Search_ModelServer_FindsTheExactCapacityInFewLevels(int capacity, bool rejects)
    {
        var search = new CapacitySearch(rejects, ServiceMs, 0.5, 1_000, null);
        LevelResult Measure(int n) => rejects ? RejectingLevel(capacity, n) : QueueingLevel(capacity, n);
        var levels = new List<LevelResult>();
        for (var n = 1; ; n *= 2)
        {
            levels.Add(Measure(n));
            if (search.Failure(levels[^1]) is not null)
            {
                break;
            }
        }

        var extra = 0;
        while (true)
        {
            var beyond = levels.Where(l => search.Failure(l) is not null).Min(l => l.Concurrency);
            var within = levels.Where(l => search.Failure(l) is null).Max(l => l.Concurrency);
            var next = CapacitySearch.Next(within, beyond, search.Estimate(levels.Where(l => l.Concurrency >= beyond)), extra);
            if (next is null)
            {
                Assert.Equal(capacity, within);
                Assert.Equal(capacity + 1, beyond);
                break;
            }

            levels.Add(Measure(next.Value));
            extra++;
        }

        // The estimate is right, so the search costs the level at the capacity and the one above it (fewer when the
        // ramp already measured one of them), against log2(capacity) levels of bisection.
        Assert.InRange(extra, 0, 2);
    }

    /// <summary>A closed loop of <paramref name="n"/> against a server serving <paramref name="capacity"/> at once and
    /// queueing the rest: X = min(n, C) / R0 and mean latency n / X.</summary>
    private static LevelResult QueueingLevel(int capacity, int n)
    {
        var x = Math.Min(n, capacity) * 1000 / ServiceMs;
        var mean = n * 1000 / x;
        return Level(n, x, p99Ms: mean * 1.1, requests: 1_000) with { LatencyMeanMs = mean, LatencyStdDevMs = 2, OkLittleConcurrency = n };
    }

    /// <summary>The same server rejecting beyond its capacity (429), every ok answer taking R0.</summary>
    private static LevelResult RejectingLevel(int capacity, int n)
    {
        var x = Math.Min(n, capacity) * 1000 / ServiceMs;
        var rejected = n > capacity ? 1_000L * (n - capacity) / n : 0;
        return Level(n, x, p99Ms: 55, rejected: rejected, requests: 1_000) with { LatencyMeanMs = ServiceMs, LatencyStdDevMs = 2, OkLittleConcurrency = x * ServiceMs / 1000 };
    }
}
