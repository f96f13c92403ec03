using System.Runtime.CompilerServices;

namespace FanOut.Tests.Limits.Simulation;

/// <summary>FANOUT_TEST_LAW=bdp runs every adaptive limit this test process creates on the staged law (docs/adaptive.md, "Toward one law").</summary>
internal static class StagedLawSwitch
{
    [ModuleInitializer]
    internal static void ReadEnvironment() =>
        AdaptiveLimitOptions.StagedLawByDefault = Environment.GetEnvironmentVariable("FANOUT_TEST_LAW") == "bdp";
}
