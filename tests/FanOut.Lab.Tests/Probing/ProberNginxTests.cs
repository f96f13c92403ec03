using FanOut.Downstream;
using FanOut.Downstream.Latency;
using FanOut.Lab.Probing;
using FanOut.Lab.Tests.Strategies;

using Xunit.Abstractions;

namespace FanOut.Lab.Tests.Probing;

/// <summary>The probe against a server nobody here wrote: Debian's nginx with <c>limit_conn 8</c> in front of a 20 ms upstream.</summary>
[Collection(SequentialCollection.Name)]
public sealed class ProberNginxTests(ITestOutputHelper output)
{
    private const int ConnectionLimit = 8;

    [NginxFact]
    public async Task Probe_NginxLimitConn8_RecommendationRespectsTheLimit()
    {
        var binary = NginxServer.FindBinary()!;
        await using var upstream = await DownstreamServer.StartAsync(new DownstreamOptions { Capacity = 1_000, Queue = 0, Latency = LatencySpec.Parse("fixed:20") });
        using var nginx = await NginxServer.StartAsync(binary, upstream.BaseAddress, ConnectionLimit);
        var progress = new SilentProbeProgress();
        var settings = new ProbeSettings { Url = new Uri(nginx.BaseAddress, "item/1"), MaxConcurrency = 64, Plan = ProberKnownAnswerTests.ShortPlan };
        var report = await new Prober(settings, progress, TimeProvider.System).RunAsync(CancellationToken.None);
        foreach (var line in progress.Lines)
        {
            output.WriteLine(line);
        }

        output.WriteLine($"recommendation: {report.Recommendation.Limit}, {report.RequestsSent} requests, {report.Seconds:0.0} s: {report.Recommendation.Reason}");
        Assert.InRange(report.Recommendation.Limit ?? 0, (int)Math.Ceiling(0.8 * ConnectionLimit), ConnectionLimit);
        Assert.Contains(report.Levels, l => l.Count("503") > 0);
        Assert.Null(report.Recommendation.RatePerSecond);
    }
}
