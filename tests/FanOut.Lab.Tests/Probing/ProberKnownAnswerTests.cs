using FanOut.Downstream;
using FanOut.Downstream.Latency;
using FanOut.Lab.Probing;
using FanOut.Lab.Tests.Strategies;

using Xunit.Abstractions;

namespace FanOut.Lab.Tests.Probing;

/// <summary>The probe against <c>fanout serve</c> servers whose capacity or rate the probe is not told.</summary>
[Collection(SequentialCollection.Name)]
[Trait(SerialTests.Category, SerialTests.Serial)]
public sealed class ProberKnownAnswerTests(ITestOutputHelper output)
{
    /// <summary>The default level length with a shorter pause and cap, so the three servers take well under a minute together.</summary>
    internal static readonly LevelPlan ShortPlan = new()
    {
        MinDuration = TimeSpan.FromSeconds(1),
        MinRequests = 50,
        MaxDuration = TimeSpan.FromSeconds(3),
        BurstPause = TimeSpan.FromMilliseconds(500),
    };

    /// <summary>The last probe's progress lines: levels and notes, as the console shows them.</summary>
    private IReadOnlyList<string> _notes = [];

    [Fact]
    public async Task Probe_Capacity24Queue500Lognormal_RecommendsNearTheCapacity()
    {
        // Judged from latency: a client starved of CPU (busy loops on both cores) reads its own wait as the server's queue,
        // so a wrong answer from a starved client is probed again (ProbeRuns.ConfirmedOnAFedClientAsync).
        var (low, high) = ((int)Math.Ceiling(0.8 * 24), (int)Math.Floor(1.3 * 24));
        var report = await ProbeAsync(new DownstreamOptions { Capacity = 24, Queue = 500, Latency = LatencySpec.Parse("lognormal:20,p99=60") }, r => r.Recommendation.Limit >= low && r.Recommendation.Limit <= high);
        Assert.InRange(report.Recommendation.Limit ?? 0, low, high);
        Assert.Null(report.Recommendation.RatePerSecond);
        Assert.Equal(LevelEnd.Measured, report.EndedBy);
    }

    [Fact]
    public async Task Probe_Capacity8NoQueueFixed30_RecommendsExactlyTheCapacity()
    {
        var report = await ProbeAsync(new DownstreamOptions { Capacity = 8, Queue = 0, Latency = LatencySpec.Parse("fixed:30") });
        Assert.Equal(8, report.Recommendation.Limit);
        Assert.Equal(RecommendationStatus.Final, report.Recommendation.Status);
        Assert.Null(report.Recommendation.RatePerSecond);
        Assert.Contains(report.Levels, l => l.Rejections > 0);

        // Issue 26: the rate check's line says what it found, not only what it sent.
        Assert.Contains(_notes, l => l.StartsWith("Rate check: some of the ", StringComparison.Ordinal) && l.EndsWith("were rejected again: the limit is on concurrency, not on rate", StringComparison.Ordinal));
    }

    [Fact]
    public async Task Probe_TokenBucket300PerSecond_RecognisesARateWithinTwentyPercent()
    {
        var options = new DownstreamOptions { Capacity = 1_000, Queue = 0, RatePerSecond = 300, Latency = LatencySpec.Parse("fixed:10") };
        var report = await ProbeAsync(options);
        for (var attempt = 1; attempt < 3 && RateReadingsDisagree(report); attempt++)
        {
            // The probe read one bucket's rate twice and the readings disagree: the client was not steady (a CI run read 302/s
            // at 8 and 211/s at 16). Probed again; readings that agree on a wrong rate still fail below.
            output.WriteLine("the probe's own readings of the rate disagree by more than a quarter: probing once more");
            report = await ProbeAsync(options);
        }

        Assert.NotNull(report.Recommendation.RatePerSecond);
        Assert.InRange(report.Recommendation.RatePerSecond!.Value, 0.8 * 300, 1.2 * 300);
        Assert.Contains("rate", report.Recommendation.Reason, StringComparison.Ordinal);
        Assert.Contains(_notes, l => l.StartsWith("Rate check: all ", StringComparison.Ordinal) && l.EndsWith("passed after the pause: the rejections follow the request rate, not the concurrency", StringComparison.Ordinal));

        // The server's bucket is refilled from the elapsed time (RequestRateBucket; a timer-driven one lost its late ticks'
        // tokens and passed 123/s on a busy CI machine), but a stall of the machine during the open-loop check can still
        // show rejections at 90% of 300: the advice is then unconfirmed and carries no code. Either way it is never final
        // with rejections under open-loop load.
        if (report.Recommendation.IsFinal)
        {
            Assert.True(report.OpenLoop!.Holds);
            Assert.Contains("TokenBucketRateLimiter", report.Recommendation.Code!.SemaphoreSlim, StringComparison.Ordinal);
            Assert.Contains("RateLimiter = rate", report.Recommendation.Code.FanOut, StringComparison.Ordinal);
        }
        else
        {
            Assert.Equal(RecommendationStatus.Unconfirmed, report.Recommendation.Status);
            Assert.False(report.OpenLoop!.Holds);
            Assert.Null(report.Recommendation.Code);
        }

        var slowest = report.Levels.Where(l => l.FailureCount == 0).Max(l => l.LatencyMeanMs!.Value);
        Assert.True(report.Recommendation.Limit >= report.Recommendation.RatePerSecond.Value * slowest / 1000, $"{report.Recommendation.Limit} at once cannot carry {report.Recommendation.RatePerSecond}/s of {slowest:0.0} ms calls");
    }

    [Fact]
    public async Task Probe_MaxRequests_NeverSendsMoreThanAllowed()
    {
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions { Capacity = 64, Queue = 0, Latency = LatencySpec.Parse("fixed:5") });
        var settings = new ProbeSettings { Url = new Uri(server.BaseAddress, "item/1"), MaxRequests = 20, Plan = ShortPlan };
        var report = await new Prober(settings, new SilentProbeProgress(), TimeProvider.System).RunAsync(CancellationToken.None);
        await server.StopAsync(CancellationToken.None);
        var stats = server.GetStats();
        Assert.Equal(20, report.RequestsSent);
        Assert.Equal(20, stats.RequestsServed + stats.Rejected429 + stats.RequestsCancelled);
        Assert.Equal(LevelEnd.MaxRequests, report.EndedBy);
        Assert.Equal(15, Assert.Single(report.Levels).Requests);

        // Not even level 1 ran its plan, but its 15 answers were ok: "at least 1" (as its line said), no code to paste.
        Assert.Equal(RecommendationStatus.AtLeast, report.Recommendation.Status);
        Assert.Equal(1, report.Recommendation.Limit);
        Assert.Null(report.Recommendation.Code);
        Assert.Contains("--max-requests 20 was spent", report.Recommendation.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Probe_MaxRate_NeverExceedsThePaceAndSaysAtLeast()
    {
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions { Capacity = 1_000, Queue = 0, Latency = LatencySpec.Parse("fixed:5") });
        var settings = new ProbeSettings { Url = new Uri(server.BaseAddress, "item/1"), MaxRatePerSecond = 100, Plan = ShortPlan };
        var report = await new Prober(settings, new SilentProbeProgress(), TimeProvider.System).RunAsync(CancellationToken.None);
        Assert.Equal(LevelEnd.MaxRate, report.EndedBy);
        Assert.Equal(RecommendationStatus.AtLeast, report.Recommendation.Status);
        Assert.Null(report.Recommendation.Code);
        Assert.Contains("--max-rate 100/s held the offered load down", report.Recommendation.Reason, StringComparison.Ordinal);

        // The pace holds over the whole probe: the paced levels sent no more than 100/s (plus one slot of slack each).
        foreach (var level in report.Levels)
        {
            Assert.True(level.Requests <= (100 * level.Seconds) + 2, $"{level.Requests} requests in {level.Seconds:0.00} s at {level.Concurrency}");
        }
    }

    [Fact]
    public async Task Probe_Duration_StopsSendingWhenItRunsOut()
    {
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions { Capacity = 1_000, Queue = 0, Latency = LatencySpec.Parse("fixed:5") });
        var settings = new ProbeSettings { Url = new Uri(server.BaseAddress, "item/1"), Duration = TimeSpan.FromSeconds(4), Plan = ShortPlan };
        var report = await new Prober(settings, new SilentProbeProgress(), TimeProvider.System).RunAsync(CancellationToken.None);
        Assert.Equal(LevelEnd.Duration, report.EndedBy);
        Assert.Equal(LevelEnd.Duration, Assert.IsType<LevelResult>(report.Levels[^1], exactMatch: true).EndedBy);

        // Calls the duration cut short may still be finishing on the server (a canceled client call does not stop the
        // handler): let those drain, then nothing new may arrive.
        for (var waited = 0; server.InFlightNow > 0 && waited < 100; waited++)
        {
            await Task.Delay(20);
        }

        var served = server.GetStats().RequestsServed;
        await Task.Delay(200);
        Assert.Equal(served, server.GetStats().RequestsServed);
    }

    [Fact]
    public async Task Probe_Cancelled_StopsAndKeepsTheLevelsDone()
    {
        var report = await ProbeCancelledAfterAsync(2);
        Assert.Equal(LevelEnd.Interrupted, report.EndedBy);
        Assert.Equal([1, 2], report.Levels.Where(l => l.EndedBy == LevelEnd.Measured).Select(l => l.Concurrency));
        Assert.True(report.Levels.Count <= 3);

        // Interrupted before saturation: "at least 2", no code.
        Assert.Equal(RecommendationStatus.AtLeast, report.Recommendation.Status);
        Assert.Equal(2, report.Recommendation.Limit);
        Assert.Null(report.Recommendation.Code);
        Assert.Contains("the probe was interrupted", report.Recommendation.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Probe_CancelledAfterACleanLevelOne_SaysAtLeastOne()
    {
        // Issue 26: interrupted after a clean level 1, the probe said "no level finished within capacity".
        var report = await ProbeCancelledAfterAsync(1);
        Assert.Equal(LevelEnd.Interrupted, report.EndedBy);
        Assert.Equal([1], report.Levels.Where(l => l.EndedBy == LevelEnd.Measured).Select(l => l.Concurrency));

        Assert.Equal(RecommendationStatus.AtLeast, report.Recommendation.Status);
        Assert.Equal(1, report.Recommendation.Limit);
        Assert.StartsWith("at least 1 at once", report.Recommendation.Reason, StringComparison.Ordinal);
        Assert.DoesNotContain("no level finished within capacity", report.Recommendation.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Probe_CancelledDuringACleanLevelOne_SaysAtLeastOne()
    {
        // Level 1 cut short after clean answers: nothing rejected, so 1 at once is known to work.
        var report = await ProbeCancelledAfterAsync(0);
        Assert.Equal(LevelEnd.Interrupted, report.EndedBy);
        var first = Assert.Single(report.Levels);
        Assert.Equal(LevelEnd.Interrupted, first.EndedBy);
        Assert.Equal(0, first.FailureCount);

        Assert.Equal(RecommendationStatus.AtLeast, report.Recommendation.Status);
        Assert.Equal(1, report.Recommendation.Limit);
        Assert.StartsWith("at least 1 at once", report.Recommendation.Reason, StringComparison.Ordinal);
        Assert.Contains("the probe was interrupted", report.Recommendation.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Probe_RefusedPort_ThrowsUnreachableNamingHostAndPort()
    {
        int port;
        using (var listener = new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, 0))
        {
            listener.Start();
            port = ((System.Net.IPEndPoint)listener.LocalEndpoint).Port;
        }

        var settings = new ProbeSettings { Url = new Uri($"http://127.0.0.1:{port}/"), Plan = ShortPlan };
        var error = await Assert.ThrowsAsync<UnreachableTargetException>(() => new Prober(settings, new SilentProbeProgress(), TimeProvider.System).RunAsync(CancellationToken.None));
        Assert.Contains($"127.0.0.1:{port}", error.Message, StringComparison.Ordinal);
    }

    /// <summary>
    /// Probes a server started for the test, again while its open-loop check saw the queue grow (<see cref="ProbeRuns.ConfirmedAsync"/>):
    /// on a CI host whose cores other test assemblies keep busy, the client can stall for a second mid-check (p99 1 s from
    /// the send against 34 ms closed-loop, for a server whose answers take a fixed 30 ms) and report "the queue grew" for a
    /// server that held.
    /// </summary>
    /// <summary>
    /// True when the probe's readings of the rate while rejecting (each level's, and the longer one its advice comes from, of
    /// which the advice is 90%) are more than a quarter apart: one server's bucket, read unsteadily by the client.
    /// </summary>
    private static bool RateReadingsDisagree(ProbeReport report)
    {
        var readings = report.Levels.Select(l => l.OkPerSecondWhileRejecting).OfType<double>()
            .Append(report.Recommendation.RatePerSecond is { } advised ? advised / 0.9 : 0)
            .Where(r => r > 0).ToArray();
        return readings.Length >= 2 && readings.Max() > 1.25 * readings.Min();
    }

    private async Task<ProbeReport> ProbeAsync(DownstreamOptions options, Func<ProbeReport, bool>? expected = null)
    {
        await using var server = await DownstreamServer.StartAsync(options);
        return expected is null
            ? await ProbeRuns.ConfirmedAsync(() => ProbeOnceAsync(server), output)
            : await ProbeRuns.ConfirmedOnAFedClientAsync(() => ProbeRuns.ConfirmedAsync(() => ProbeOnceAsync(server), output), output, expected);
    }

    /// <summary>Probes a server with room for everything (1,000 at once, 5 ms) and cancels, as Ctrl+C would, once <paramref name="levels"/> levels have finished.</summary>
    private static async Task<ProbeReport> ProbeCancelledAfterAsync(int levels)
    {
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions { Capacity = 1_000, Queue = 0, Latency = LatencySpec.Parse("fixed:5") });
        using var cancel = new CancellationTokenSource();
        var settings = new ProbeSettings { Url = new Uri(server.BaseAddress, "item/1"), Plan = ShortPlan };
        return await new Prober(settings, new CancelAfterLevels(levels, cancel), TimeProvider.System).RunAsync(cancel.Token);
    }

    private async Task<ProbeReport> ProbeOnceAsync(DownstreamServer server)
    {
        var progress = new SilentProbeProgress();
        _notes = progress.Lines;
        var settings = new ProbeSettings { Url = new Uri(server.BaseAddress, "item/1"), MaxConcurrency = 128, Plan = ShortPlan };
        var report = await new Prober(settings, progress, TimeProvider.System).RunAsync(CancellationToken.None);
        foreach (var line in progress.Lines)
        {
            output.WriteLine(line);
        }

        output.WriteLine($"recommendation: {report.Recommendation.Limit}, rate {report.Recommendation.RatePerSecond}, {report.RequestsSent} requests, {report.Seconds:0.0} s: {report.Recommendation.Reason}");
        output.WriteLine($"usl: {report.Usl}");
        return report;
    }

    /// <summary>
    /// Cancels the probe, as Ctrl+C would, once <c>count</c> levels have finished, as the next level starts. A level measured
    /// again (the probe confirms a stop that one short level read, a busy machine's hiccup) is still the same level.
    /// </summary>
    private sealed class CancelAfterLevels(int count, CancellationTokenSource cancel) : IProbeProgress
    {
        private readonly HashSet<int> _finished = [];

        public void LevelStarted(int concurrency)
        {
            if (_finished.Count >= count && !_finished.Contains(concurrency))
            {
                cancel.CancelAfter(TimeSpan.FromMilliseconds(100));
            }
        }

        public void LevelFinished(LevelResult level, LevelVerdict verdict) => _finished.Add(level.Concurrency);

        public void Note(string message)
        {
        }
    }
}
