using FanOut.Lab.Probing;
using FanOut.Lab.Results;

namespace FanOut.Cli.Tests;

/// <summary>A probe of a downstream that holds 6 at once and rejects beyond, as the engine writes it.</summary>
internal static class SampleProbeReports
{
    /// <summary>The probe's report; <paramref name="uslPeak"/> is where its fitted curve peaks, <paramref name="openLoop"/> adds a held open-loop check at 6.</summary>
    public static ProbeReport Capacity6(double uslPeak = 7, bool openLoop = false)
    {
        LevelResult[] levels = [Level(1, 0, null), Level(2, 0, null), Level(4, 0, null), Level(6, 0, null), Level(7, 40, "beyond capacity: 12% rejected (429/503)"), Level(8, 90, "overloaded: 23% rejected (429/503)")];
        var check = openLoop
            ? new OpenLoopResult(114, 6, 342, 342, 342, new Dictionary<string, long>(), 52, 58, 50, 55, 60, 0.3, 0.4, 0, 3.0, 2, true, "held: 342 arrivals at 114/s, none rejected, 0 waiting at the end")
            : null;
        return new ProbeReport(
            "http://127.0.0.1:5391/item/1",
            new MachineInfo("Linux", 2, ".NET 10", "CPU"),
            levels,
            new UslModel(0.01, 0.0015, 21, uslPeak, 0.97),
            null,
            new CapacityFinding(CapacityFinding.Rejections, 50, 6, 7, 6.0, [6, 7], true),
            check,
            Recommender.AtCapacity(levels[3], levels[4], "was beyond it: 12% rejected (429/503)", 6.0),
            20_000,
            2_100,
            9.5,
            LevelEnd.Measured);
    }

    private static LevelResult Level(int n, long rejected, string? note) => new()
    {
        Concurrency = n,
        Requests = 300 + rejected,
        Ok = 300,
        Failures = rejected > 0 ? new Dictionary<string, long> { ["429"] = rejected } : new Dictionary<string, long>(),
        OkPerSecond = 20 * Math.Min(n, 6),
        LatencyP50Ms = 50,
        LatencyP95Ms = 55,
        LatencyP99Ms = 60,
        LatencyMeanMs = 50,
        LatencyStdDevMs = 1,
        OkLittleConcurrency = Math.Min(n, 6),
        LittleConcurrency = n,
        Seconds = 1,
        EndedBy = LevelEnd.Measured,
        StopReason = note,
    };
}
