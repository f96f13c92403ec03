using System.Globalization;

using FanOut.Lab.Probing;

using Xunit.Abstractions;

namespace FanOut.Lab.Tests.Probing;

/// <summary>Runs a probe for a test with a short plan and logs what the docs' table reports: capacity, recommendation,
/// requests, seconds, and the open-loop p99 beside the closed-loop one.</summary>
internal static class ProbeRuns
{
    /// <summary>Probes a confirmed-capacity test runs at most.</summary>
    private const int Attempts = 3;

    /// <summary>Levels of at least 0.5 s and 30 answers (at most 2 s), a 0.5 s burst pause, a 1 s open-loop check:
    /// short enough that the real-server tests together take about a minute.</summary>
    public static readonly LevelPlan TestPlan = new()
    {
        MinDuration = TimeSpan.FromMilliseconds(500),
        MinRequests = 30,
        MaxDuration = TimeSpan.FromSeconds(2),
        BurstPause = TimeSpan.FromMilliseconds(500),
        OpenLoopDuration = TimeSpan.FromSeconds(1),
    };

    /// <summary>
    /// A probe whose capacity should be confirmed. The open-loop check sends at 0.9x the throughput found, so on a CI host
    /// whose two cores are busy with other test assemblies the client itself can fall behind and report "the queue grew"
    /// for a server that held: then the probe is run again (at most <see cref="Attempts"/> in all), and what the test
    /// asserts is the last report. Any other outcome (a wrong capacity, a failure) is returned as it is.
    /// </summary>
    public static Task<ProbeReport> RunConfirmedAsync(Uri url, ITestOutputHelper output, string server) =>
        ConfirmedAsync(() => RunAsync(url, output, server), output);

    /// <summary>Runs <paramref name="probe"/>, and again (at most <see cref="Attempts"/> in all) while its open-loop check saw the queue grow; returns the last report.</summary>
    public static async Task<ProbeReport> ConfirmedAsync(Func<Task<ProbeReport>> probe, ITestOutputHelper output)
    {
        var report = await probe();
        for (var attempt = 1; attempt < Attempts && QueueGrew(report); attempt++)
        {
            output.WriteLine("the client fell behind its own open-loop schedule (a loaded host): probing once more");
            report = await probe();
        }

        return report;
    }

    private static bool QueueGrew(ProbeReport report) =>
        report.Recommendation.Status == RecommendationStatus.Unconfirmed && report.OpenLoop?.Verdict.StartsWith("the queue grew", StringComparison.Ordinal) == true;

    public static async Task<ProbeReport> RunAsync(Uri url, ITestOutputHelper output, string server, Func<ProbeSettings, ProbeSettings>? adjust = null, CancellationToken cancellationToken = default)
    {
        var progress = new SilentProbeProgress();
        var settings = new ProbeSettings { Url = url, MaxConcurrency = 64, Plan = TestPlan };
        settings = adjust?.Invoke(settings) ?? settings;
        var report = await new Prober(settings, progress, TimeProvider.System).RunAsync(cancellationToken);
        foreach (var line in progress.Lines)
        {
            output.WriteLine(line);
        }

        var r = report.Recommendation;
        var open = report.OpenLoop;
        output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{server}: {r.Status} {r.Limit} at once, rate {r.RatePerSecond}; {report.RequestsSent} requests, {report.Seconds:0.0} s; open-loop p99 {open?.LatencyP99Ms:0.0} ms (from send {open?.ServiceP99Ms:0.0} ms) vs closed-loop p99 {open?.ClosedLoopP99Ms:0.0} ms: {open?.Verdict}"));
        output.WriteLine($"why: {r.Reason}");
        output.WriteLine($"usl: {report.Usl}; band: {report.UslBand?.Plain}");
        return report;
    }
}
