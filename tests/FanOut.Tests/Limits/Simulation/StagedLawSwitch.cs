using System.Runtime.CompilerServices;

namespace FanOut.Tests.Limits.Simulation;

/// <summary>
/// FANOUT_TEST_LAW=bdp runs every adaptive limit this test process creates on the staged law (docs/adaptive.md, "Toward one
/// law"); FANOUT_TEST_LEAVE_OUT=Rule[,Rule] leaves those of its rules out (the ablation, docs/adaptive.md, "Ablation").
/// </summary>
internal static class StagedLawSwitch
{
    private static bool Staged => Environment.GetEnvironmentVariable("FANOUT_TEST_LAW") == "bdp";

    /// <summary>Why a test of the band's mechanism does not run (null: it runs).</summary>
    internal static string? SkipReason => Staged ? "a mechanism of the band, which the staged law does not have (FANOUT_TEST_LAW=bdp)" : null;

    [ModuleInitializer]
    internal static void ReadEnvironment()
    {
        AdaptiveLimitOptions.StagedLawByDefault = Staged;
        AdaptiveLimitOptions.RulesLeftOutByDefault = Enum.Parse<FanOut.Limits.Adaptive.BandwidthDelayRules>(Environment.GetEnvironmentVariable("FANOUT_TEST_LEAVE_OUT") ?? "None");
    }
}
