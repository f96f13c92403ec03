using FanOut.Tests.Limits.Simulation;

namespace FanOut.Tests.Limits;

/// <summary>
/// A test of the band's own mechanism (a phase flag, a confirming round, a first window, an option the staged law does not
/// have), not of an outcome: skipped under FANOUT_TEST_LAW=bdp, so that the failures there are the staged law's outcomes.
/// </summary>
internal sealed class BandMechanismFactAttribute : FactAttribute
{
    public BandMechanismFactAttribute() => Skip = StagedLawSwitch.SkipReason;
}

/// <inheritdoc cref="BandMechanismFactAttribute"/>
internal sealed class BandMechanismTheoryAttribute : TheoryAttribute
{
    public BandMechanismTheoryAttribute() => Skip = StagedLawSwitch.SkipReason;
}
