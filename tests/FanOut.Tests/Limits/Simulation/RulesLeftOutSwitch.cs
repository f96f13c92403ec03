using System.Runtime.CompilerServices;

namespace FanOut.Tests.Limits.Simulation;

/// <summary>FANOUT_TEST_LEAVE_OUT=Rule[,Rule] leaves those rules of the adaptive law out of every limit this test process creates (the ablation, docs/adaptive.md, "Ablation").</summary>
internal static class RulesLeftOutSwitch
{
    [ModuleInitializer]
    internal static void ReadEnvironment() =>
        AdaptiveLimitOptions.RulesLeftOutByDefault = Enum.Parse<FanOut.Limits.Adaptive.BandwidthDelayRules>(Environment.GetEnvironmentVariable("FANOUT_TEST_LEAVE_OUT") ?? "None");
}
